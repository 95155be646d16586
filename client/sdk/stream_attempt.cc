// Implements StreamAttempt. A message is verified in two steps so that the
// shared tree is locked exclusively only while tree blocks are added; data
// blocks are verified under a shared lock, and released to the sink with no
// lock held, so a slow or blocking sink never stalls other streams.

#include "client/sdk/stream_attempt.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "client/sdk/grpc_status.h"
#include "lib/hash.h"
#include "lib/status_macros.h"
#include "proto/convert.h"

namespace verity::client {
namespace {

// Bounds the request; a longer list is cut (top levels first), and the
// server then resends blocks the client already holds, which it checks.
constexpr size_t kMaxHeldBlocksInRequest = 65536;

// How many of `msg`'s tree blocks `tree` holds verified.
uint64_t CountVerified(const MerkleVerifier& tree,
                       const v1::ReadResponse& msg) {
  absl::flat_hash_set<uint64_t> seen;
  uint64_t verified = 0;
  for (const v1::TreeBlock& block : msg.tree_blocks()) {
    absl::StatusOr<TreeBlockId> id =
        tree.geometry().BlockAtOrdinal(block.index());
    if (id.ok() && seen.insert(block.index()).second &&
        tree.IsTreeBlockVerified(*id)) {
      ++verified;
    }
  }
  return verified;
}

}  // namespace

StreamAttempt::StreamAttempt(const ReadTarget& target,
                             std::shared_ptr<SharedTree> tree, uint64_t begin,
                             std::optional<uint64_t> end)
    : target_(target),
      tree_(std::move(tree)),
      begin_(begin),
      end_(end),
      verifier_(target.trusted, begin,
                end.has_value() ? std::optional<uint64_t>(*end - begin)
                                : std::nullopt,
                target.verifier),
      next_(begin) {
  if (tree_ != nullptr) UseTree();
}

std::optional<uint64_t> StreamAttempt::blob_size() const {
  if (verifier_.verified_tree() == nullptr) return std::nullopt;
  return verifier_.verified_tree()->geometry().data_size();
}

void StreamAttempt::UseTree() {
  absl::ReaderMutexLock lock(&tree_->mu());
  // Fails only for a tree of another digest, which the cache never returns;
  // the verifier then builds its own tree and nothing is shared.
  if (!verifier_.UseVerifiedTree(tree_->verifier()).ok()) tree_ = nullptr;
}

v1::ReadRequest StreamAttempt::MakeRequest() {
  v1::ReadRequest request;
  request.set_digest(target_.trusted.ToString());
  request.set_offset(begin_);
  if (end_.has_value()) request.set_length(*end_ - begin_);
  request.set_priority_class(target_.priority);
  if (tree_ == nullptr) return request;
  absl::ReaderMutexLock lock(&tree_->mu());
  bool held = false;
  if (verifier_.HoldsAllTreeBlocks()) {
    request.set_have_whole_tree(true);
    held = tree_->geometry().num_levels() > 0;
  } else {
    std::vector<uint64_t> blocks = verifier_.HeldTreeBlocks();
    if (blocks.size() > kMaxHeldBlocksInRequest) {
      blocks.resize(kMaxHeldBlocksInRequest);
    }
    request.mutable_have_tree_blocks()->Add(blocks.begin(), blocks.end());
    held = !blocks.empty();
  }
  if (held) {
    FetchCounters::Add(target_.counters->requests_with_held_tree_blocks, 1);
  }
  return request;
}

AttemptResult StreamAttempt::Run(grpc::ClientContext* context,
                                 const PositionedSink& sink) {
  FetchCounters::Add(target_.counters->read_streams, 1);
  std::unique_ptr<grpc::ClientReaderInterface<v1::ReadResponse>> reader =
      target_.stub->Read(context, MakeRequest());
  v1::ReadResponse msg;
  absl::Status local;
  while (local.ok() && reader->Read(&msg)) local = OnMessage(msg, sink);
  if (!local.ok()) {
    // Drained so that Finish() does not wait on a server still sending.
    context->TryCancel();
    while (reader->Read(&msg)) {
    }
    reader->Finish().IgnoreError();
    return {local, false};
  }
  absl::Status rpc = FromGrpcStatus(reader->Finish());
  if (!rpc.ok()) return {std::move(rpc), true};
  return {verifier_.Finish(), false};
}

void StreamAttempt::AdoptTree(const v1::ReadResponse& first) {
  // Any failure here is left for the verifier to report, as DATA_LOSS.
  if (!first.has_fsverity_descriptor()) return;
  absl::StatusOr<Descriptor> descriptor =
      DescriptorFromProto(first.fsverity_descriptor());
  if (!descriptor.ok()) return;
  absl::StatusOr<MerkleVerifier> tree =
      MerkleVerifier::Create(*descriptor, target_.trusted, target_.verifier);
  if (!tree.ok()) return;
  tree_ = target_.cache->FindOrInsert(target_.trusted, *std::move(tree));
  UseTree();
}

absl::Status StreamAttempt::OnMessage(v1::ReadResponse& msg,
                                      const PositionedSink& sink) {
  if (first_message_) {
    first_message_ = false;
    if (tree_ == nullptr) AdoptTree(msg);
  }
  if (msg.tree_blocks().empty()) return VerifyData(msg, sink);
  if (msg.data().empty()) return AddTreeBlocks(msg);
  // Tree blocks first, then the data: the order the verifier processes a
  // message in, so the split changes nothing it checks.
  v1::ReadResponse data;
  data.set_data_offset(msg.data_offset());
  data.mutable_data()->swap(*msg.mutable_data());
  msg.set_data_offset(0);
  RETURN_IF_ERROR(AddTreeBlocks(msg));
  return VerifyData(data, sink);
}

absl::Status StreamAttempt::AddTreeBlocks(const v1::ReadResponse& msg) {
  const auto refuse_data = [](absl::Span<const uint8_t>) {
    return absl::InternalError("tree blocks came with data");
  };
  FetchCounters::Add(target_.counters->tree_blocks_received,
                     msg.tree_blocks_size());
  if (tree_ == nullptr) return verifier_.OnResponse(msg, refuse_data);
  uint64_t added;
  absl::Status status;
  {
    absl::WriterMutexLock lock(&tree_->mu());
    const uint64_t before = CountVerified(*tree_->verifier(), msg);
    status = verifier_.OnResponse(msg, refuse_data);
    // Blocks verified before a failure stay verified: they are good.
    added = CountVerified(*tree_->verifier(), msg) - before;
  }
  FetchCounters::Add(target_.counters->tree_blocks_hashed, added);
  target_.cache->Grew(*tree_, added);
  return status;
}

absl::Status StreamAttempt::VerifyData(const v1::ReadResponse& msg,
                                       const PositionedSink& sink) {
  // The verifier releases at most one span per message; it points into
  // `msg`, which outlives this call.
  absl::Span<const uint8_t> released;
  const auto capture = [&released](absl::Span<const uint8_t> bytes) {
    released = bytes;
    return absl::OkStatus();
  };
  if (tree_ == nullptr) {
    RETURN_IF_ERROR(verifier_.OnResponse(msg, capture));
  } else {
    absl::ReaderMutexLock lock(&tree_->mu());
    RETURN_IF_ERROR(verifier_.OnResponse(msg, capture));
  }
  FetchCounters::Add(target_.counters->data_bytes_verified, msg.data().size());
  if (released.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(sink(next_, released));
  next_ += released.size();
  FetchCounters::Add(target_.counters->bytes_delivered, released.size());
  return absl::OkStatus();
}

}  // namespace verity::client
