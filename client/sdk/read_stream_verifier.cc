// Implements ReadStreamVerifier. The descriptor is authenticated by the
// trusted digest, tree blocks by their verified parents, data blocks by the
// lowest level; positions are checked before content, and content before
// anything is released.

#include "client/sdk/read_stream_verifier.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/tree/read_plan.h"
#include "proto/convert.h"

namespace verity::client {

ReadStreamVerifier::ReadStreamVerifier(ParsedDigest trusted, uint64_t offset,
                                       std::optional<uint64_t> length,
                                       const VerifierOptions& options,
                                       TreeCache* cache)
    : trusted_(std::move(trusted)),
      offset_(offset),
      length_(length),
      options_(options),
      cache_(cache),
      verified_end_(offset) {}

absl::Status ReadStreamVerifier::UseVerifiedTree(
    std::shared_ptr<VerifiedTree> tree) {
  if (started_ || !failed_.ok()) {
    return absl::FailedPreconditionError(
        "a verified tree must be given before the stream starts");
  }
  if (tree == nullptr) return absl::InvalidArgumentError("no tree given");
  if (tree->digest() != trusted_) {
    return absl::InvalidArgumentError(
        "the verified tree belongs to another digest");
  }
  tree_ = std::move(tree);
  return absl::OkStatus();
}

std::vector<TreeBlockId> ReadStreamVerifier::NeededTreeBlocks() const {
  if (tree_ == nullptr) return {};
  const TreeGeometry& geometry = tree_->geometry();
  absl::StatusOr<ByteRange> range =
      CheckByteRange(geometry.data_size(), offset_, length_);
  if (!range.ok()) return {};  // the server will refuse the range
  return TreeBlocksFor(geometry, BlocksOf(geometry, *range));
}

std::vector<uint64_t> ReadStreamVerifier::HeldTreeBlocks() const {
  std::vector<uint64_t> held;
  for (TreeBlockId id : NeededTreeBlocks()) {
    if (tree_->IsVerified(id)) {
      held.push_back(tree_->geometry().Ordinal(id));
    }
  }
  return held;
}

bool ReadStreamVerifier::HoldsAllTreeBlocks() const {
  if (tree_ == nullptr) return false;
  const std::vector<TreeBlockId> needed = NeededTreeBlocks();
  return std::all_of(needed.begin(), needed.end(),
                     [this](TreeBlockId id) { return tree_->IsVerified(id); });
}

absl::Status ReadStreamVerifier::OnResponse(const verity::v1::ReadResponse& msg,
                                            const ByteSink& sink) {
  const ByteChain::Piece pieces[] = {AsBytes(msg.data())};
  return OnResponse(msg, ByteChain(pieces), sink);
}

absl::Status ReadStreamVerifier::OnResponse(
    const verity::v1::ReadResponse& head, const ByteChain& data,
    const ByteSink& sink) {
  if (!failed_.ok()) return failed_;
  absl::Status status = Process(head, data, sink);
  if (!status.ok()) failed_ = status;
  return status;
}

absl::Status ReadStreamVerifier::Finish() const {
  if (!failed_.ok()) return failed_;
  if (!started_) {
    return absl::DataLossError("the stream ended before the descriptor");
  }
  if (verified_end_ < range_end_) {
    return absl::DataLossError(
        absl::StrCat("the stream ended at byte ", verified_end_,
                     ", before the end of the range at ", range_end_));
  }
  return absl::OkStatus();
}

absl::Status ReadStreamVerifier::Process(const verity::v1::ReadResponse& msg,
                                         const ByteChain& data,
                                         const ByteSink& sink) {
  if (!started_) {
    RETURN_IF_ERROR(OnFirstResponse(msg));
  } else if (!msg.digest().empty() || HasDescriptor(msg)) {
    return absl::DataLossError(
        "only the first message may carry the digest and descriptor");
  }
  const uint64_t added_before = tree_blocks_added_;
  absl::Status added = absl::OkStatus();
  for (const verity::v1::TreeBlock& block : msg.tree_blocks()) {
    added = AddTreeBlock(block);
    if (!added.ok()) break;
  }
  // Blocks verified before a failure stay verified: they are good.
  if (cache_ != nullptr && tree_blocks_added_ != added_before) {
    cache_->Update(*tree_);
  }
  RETURN_IF_ERROR(added);
  if (data.empty()) {
    if (msg.data_offset() != 0) {
      return absl::DataLossError("a message without data has a data_offset");
    }
    return CountEmptyMessage(msg);
  }
  return OnData(msg.data_offset(), data, sink);
}

absl::Status ReadStreamVerifier::CountEmptyMessage(
    const verity::v1::ReadResponse& msg) {
  if (msg.tree_blocks_size() > 0 || HasDescriptor(msg)) {
    return absl::OkStatus();
  }
  if (++empty_messages_ > kMaxEmptyMessages) {
    return absl::DataLossError(
        absl::StrCat("the stream sent more than ", kMaxEmptyMessages,
                     " messages with neither tree blocks nor data"));
  }
  return absl::OkStatus();
}

absl::Status ReadStreamVerifier::OnFirstResponse(
    const verity::v1::ReadResponse& msg) {
  if (msg.digest().empty() || !HasDescriptor(msg)) {
    return absl::DataLossError(
        "the first message lacks the digest or the descriptor");
  }
  RETURN_IF_ERROR(CheckDigestText(msg.digest()));
  ASSIGN_OR_RETURN(const Descriptor descriptor, DescriptorOf(msg));
  RETURN_IF_ERROR(AuthenticateDescriptor(descriptor));
  RETURN_IF_ERROR(SetRange(tree_->geometry()));
  started_ = true;
  return absl::OkStatus();
}

absl::Status ReadStreamVerifier::AuthenticateDescriptor(
    const Descriptor& descriptor) {
  // A held tree's descriptor hashed to the trusted digest, so the stream's,
  // which is checked either way, is authentic exactly if it is the same.
  if (tree_ != nullptr) {
    if (descriptor == tree_->descriptor()) return absl::OkStatus();
    return absl::DataLossError(
        "descriptor does not hash to the trusted digest");
  }
  ASSIGN_OR_RETURN(tree_, VerifiedTree::Create(descriptor, trusted_, options_));
  // Another stream of the blob may have cached its tree meanwhile: share it.
  if (cache_ != nullptr) tree_ = cache_->Insert(std::move(tree_));
  return absl::OkStatus();
}

absl::Status ReadStreamVerifier::CheckDigestText(absl::string_view text) const {
  absl::StatusOr<ParsedDigest> claimed = ParseDigest(text);
  if (!claimed.ok()) {
    return absl::DataLossError(absl::StrCat(
        "the stream names a malformed digest: ", claimed.status().message()));
  }
  if (claimed->algorithm != trusted_.algorithm ||
      claimed->digest != trusted_.digest) {
    return absl::DataLossError(absl::StrCat("the stream is for ", text,
                                            ", not for the trusted ",
                                            trusted_.ToString()));
  }
  return absl::OkStatus();
}

absl::Status ReadStreamVerifier::SetRange(const TreeGeometry& geometry) {
  ASSIGN_OR_RETURN(const ByteRange range,
                   CheckByteRange(geometry.data_size(), offset_, length_));
  range_end_ = range.end;
  const BlockRange blocks = BlocksOf(geometry, range);
  const ByteRange block_bytes = BytesOf(geometry, blocks);
  next_offset_ = block_bytes.begin;
  data_end_ = block_bytes.end;
  end_block_ = blocks.end;
  return absl::OkStatus();
}

absl::Status ReadStreamVerifier::AddTreeBlock(
    const verity::v1::TreeBlock& block) {
  const TreeGeometry& geometry = tree_->geometry();
  absl::StatusOr<TreeBlockId> id = geometry.BlockAtOrdinal(block.index());
  if (!id.ok()) return absl::DataLossError(id.status().message());
  if (!received_tree_blocks_.insert(block.index()).second) {
    return absl::DataLossError(
        absl::StrCat("tree block ", block.index(), " was sent twice"));
  }
  // Only blocks for data still to come are useful; refusing the rest bounds
  // what a server can make us hold.
  if (!Authenticates(geometry, *id,
                     {next_offset_ / geometry.block_size(), end_block_})) {
    return absl::DataLossError(
        absl::StrCat("tree block ", block.index(),
                     " verifies no data that remains in the requested range"));
  }
  ASSIGN_OR_RETURN(const bool added, tree_->Add(*id, AsBytes(block.data())));
  if (added) ++tree_blocks_added_;
  return absl::OkStatus();
}

absl::Status ReadStreamVerifier::OnData(uint64_t data_offset,
                                        const ByteChain& data,
                                        const ByteSink& sink) {
  RETURN_IF_ERROR(CheckDataPlacement(data_offset, data.size()));
  RETURN_IF_ERROR(
      tree_->VerifyData(data_offset / tree_->geometry().block_size(), data));
  const uint64_t chunk_end = data_offset + data.size();
  next_offset_ = chunk_end;
  const uint64_t from = std::max(data_offset, offset_);
  const uint64_t to = std::min(chunk_end, range_end_);
  if (from >= to) return absl::OkStatus();
  // verified_end_ follows each piece, so that a sink may write at it.
  absl::Status delivered = absl::OkStatus();
  data.Sub(from - data_offset, to - from)
      .ForEachPiece([&](ByteChain::Piece piece) {
        delivered = sink(piece);
        if (delivered.ok()) verified_end_ += piece.size();
        return delivered.ok();
      });
  return delivered;
}

absl::Status ReadStreamVerifier::CheckDataPlacement(uint64_t data_offset,
                                                    uint64_t size) const {
  const TreeGeometry& geometry = tree_->geometry();
  if (next_offset_ >= data_end_) {
    return absl::DataLossError(absl::StrCat("data at offset ", data_offset,
                                            " after the range was complete"));
  }
  if (data_offset != next_offset_) {
    return absl::DataLossError(absl::StrCat(
        "data at offset ", data_offset, " where ", next_offset_, " was due"));
  }
  if (size > data_end_ - data_offset) {
    return absl::DataLossError(
        absl::StrCat("data [", data_offset, ", +", size, ") goes past ",
                     data_end_, ", the end of the requested range's blocks"));
  }
  if (size % geometry.block_size() != 0 &&
      data_offset + size != geometry.data_size()) {
    return absl::DataLossError(absl::StrCat("data [", data_offset, ", +", size,
                                            ") does not end on a block"));
  }
  return absl::OkStatus();
}

}  // namespace verity::client
