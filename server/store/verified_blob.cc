// Implements VerifiedBlob. Tree blocks are verified under an exclusive lock
// (they change the cache); data blocks only read the cache, so many streams
// verify data concurrently.

#include "server/store/verified_blob.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/hash.h"
#include "lib/status_macros.h"

namespace verity::server {
namespace {

constexpr absl::string_view kTreeCorruption = "verityd/corruption-in-tree";

// Marks a DATA_LOSS as found in the tree.
absl::Status InTree(absl::Status status) {
  if (status.code() == absl::StatusCode::kDataLoss) {
    status.SetPayload(kTreeCorruption, absl::Cord("tree"));
  }
  return status;
}

}  // namespace

bool IsTreeCorruption(const absl::Status& status) {
  return status.GetPayload(kTreeCorruption).has_value();
}

absl::StatusOr<std::shared_ptr<VerifiedBlob>> VerifiedBlob::Create(
    std::shared_ptr<const Blob> blob, bool verify_once) {
  VerifierOptions options;
  options.max_block_size = blob->geometry().block_size();
  absl::StatusOr<MerkleVerifier> verifier =
      MerkleVerifier::Create(blob->descriptor(), blob->digest(), options);
  if (!verifier.ok()) {
    return absl::DataLossError(absl::StrCat("blob ", blob->digest_text(), ": ",
                                            verifier.status().message()));
  }
  return std::shared_ptr<VerifiedBlob>(
      new VerifiedBlob(std::move(blob), *std::move(verifier), verify_once));
}

VerifiedBlob::VerifiedBlob(std::shared_ptr<const Blob> blob,
                           MerkleVerifier verifier, bool verify_once)
    : blob_(std::move(blob)),
      verifier_(std::move(verifier)),
      verified_blocks_(
          verify_once ? (blob_->geometry().data_block_count() + 63) / 64 : 0) {}

absl::Status VerifiedBlob::ReadVerified(uint64_t first_block,
                                        uint64_t end_block, std::string* out) {
  out->clear();
  BlockRead read;
  RETURN_IF_ERROR(Load(first_block, end_block, &read));
  RETURN_IF_ERROR(VerifyRest(&read));
  *out = std::move(read.data);
  return absl::OkStatus();
}

absl::Status VerifiedBlob::Load(uint64_t first_block, uint64_t end_block,
                                BlockRead* read) {
  read->first = read->next = first_block;
  read->end = end_block;
  RETURN_IF_ERROR(ReadUnverified(*blob_, first_block, end_block, &read->data));
  read->loaded = true;
  return absl::OkStatus();
}

absl::Status VerifiedBlob::VerifyCached(BlockRead* read) {
  absl::ReaderMutexLock lock(&mu_);
  return VerifyLoaded(read, CachedUpTo(*read));
}

absl::Status VerifiedBlob::VerifyRest(BlockRead* read) {
  if (read->next == read->end) return absl::OkStatus();
  RETURN_IF_ERROR(VerifyTreeFor(read->next, read->end));
  absl::ReaderMutexLock lock(&mu_);
  return VerifyLoaded(read, read->end);
}

uint64_t VerifiedBlob::CachedUpTo(const BlockRead& read) const {
  const TreeGeometry& geometry = blob_->geometry();
  uint64_t checked_tree_block = UINT64_MAX;
  for (uint64_t i = read.next; i < read.end; ++i) {
    if (IsMarkedVerified(i)) continue;
    absl::StatusOr<HashLocation> location = geometry.DataBlockHashLocation(i);
    if (!location.ok()) return i;
    if (location->is_root || location->block_index == checked_tree_block) {
      continue;
    }
    if (!verifier_.IsTreeBlockVerified(
            {location->level, location->block_index})) {
      return i;
    }
    checked_tree_block = location->block_index;
  }
  return read.end;
}

absl::Status VerifiedBlob::VerifyLoaded(BlockRead* read, uint64_t upto) {
  const uint64_t bs = geometry().block_size();
  const absl::Span<const uint8_t> data = AsBytes(read->data);
  uint64_t hashed = 0;
  absl::Status status;
  for (; read->next < upto; ++read->next) {
    const uint64_t i = read->next;
    if (IsMarkedVerified(i)) continue;
    status =
        verifier_.VerifyDataBlock(i, data.subspan((i - read->first) * bs, bs));
    ++hashed;
    if (!status.ok()) break;
    MarkVerified(i);
  }
  data_blocks_hashed_.fetch_add(hashed, std::memory_order_relaxed);
  if (!status.ok()) {
    read->data.clear();
    read->loaded = false;
  }
  return Annotate(status);
}

bool VerifiedBlob::IsMarkedVerified(uint64_t block) const {
  if (verified_blocks_.empty()) return false;
  const uint64_t word =
      verified_blocks_[block / 64].load(std::memory_order_acquire);
  return (word & (uint64_t{1} << (block % 64))) != 0;
}

void VerifiedBlob::MarkVerified(uint64_t block) {
  if (verified_blocks_.empty()) return;
  verified_blocks_[block / 64].fetch_or(uint64_t{1} << (block % 64),
                                        std::memory_order_release);
}

void VerifiedBlob::PrefetchTree(uint64_t first_block,
                                uint64_t end_block) const {
  std::vector<TreeBlockId> missing;
  {
    absl::ReaderMutexLock lock(&mu_);
    absl::StatusOr<std::vector<TreeBlockId>> ids =
        verifier_.MissingTreeBlocks(first_block, end_block);
    if (!ids.ok()) return;
    missing = *std::move(ids);
  }
  // Missing blocks of one level are consecutive: one hint per level.
  const TreeGeometry& geometry = blob_->geometry();
  const uint64_t bs = geometry.block_size();
  for (size_t i = 0; i < missing.size();) {
    size_t j = i + 1;
    while (j < missing.size() && missing[j].level == missing[i].level) ++j;
    const uint64_t begin = geometry.Ordinal(missing[i]);
    const uint64_t last = geometry.Ordinal(missing[j - 1]);
    blob_->PrefetchTree(begin * bs, (last - begin + 1) * bs);
    i = j;
  }
}

absl::Status VerifiedBlob::VerifyTreeFor(uint64_t first_block,
                                         uint64_t end_block) {
  if (TreeIsVerifiedFor(first_block, end_block)) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(std::vector<TreeBlockId> missing,
                   verifier_.MissingTreeBlocks(first_block, end_block));
  const TreeGeometry& geometry = blob_->geometry();
  std::string block(geometry.block_size(), '\0');
  for (const TreeBlockId& id : missing) {
    RETURN_IF_ERROR(InTree(
        Annotate(blob_->ReadTree(geometry.Ordinal(id) * geometry.block_size(),
                                 AsMutableBytes(&block)))));
    RETURN_IF_ERROR(
        InTree(Annotate(verifier_.AddTreeBlock(id, AsBytes(block)))));
    cached_tree_bytes_.fetch_add(block.size(), std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

bool VerifiedBlob::TreeIsVerifiedFor(uint64_t first_block,
                                     uint64_t end_block) const {
  absl::ReaderMutexLock lock(&mu_);
  absl::StatusOr<std::vector<TreeBlockId>> missing =
      verifier_.MissingTreeBlocks(first_block, end_block);
  return missing.ok() && missing->empty();
}

absl::StatusOr<std::string> VerifiedBlob::VerifiedTreeBlock(
    TreeBlockId id) const {
  absl::ReaderMutexLock lock(&mu_);
  ASSIGN_OR_RETURN(absl::Span<const uint8_t> block,
                   verifier_.VerifiedTreeBlock(id));
  return std::string(block.begin(), block.end());
}

absl::Status VerifiedBlob::Annotate(const absl::Status& status) const {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("blob ", blob_->digest_text(),
                                                  ": ", status.message()));
}

absl::Status ReadUnverified(const Blob& blob, uint64_t first_block,
                            uint64_t end_block, std::string* out) {
  const TreeGeometry& geometry = blob.geometry();
  const uint64_t begin = first_block * geometry.block_size();
  const uint64_t end =
      std::min(end_block * geometry.block_size(), geometry.data_size());
  if (begin >= end) {
    return absl::InvalidArgumentError(
        absl::StrCat("no data blocks in [", first_block, ", ", end_block, ")"));
  }
  out->resize(end - begin);
  return blob.ReadData(begin, AsMutableBytes(out));
}

}  // namespace verity::server
