// Implements VerifiedBlob. Tree blocks are verified under an exclusive lock
// (they change the cache); data blocks only read the cache, so many streams
// verify data concurrently.

#include "server/verified_blob.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/hash.h"
#include "lib/status_macros.h"

namespace verity::server {

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
  RETURN_IF_ERROR(VerifyTreeFor(first_block, end_block));
  RETURN_IF_ERROR(ReadUnverified(*blob_, first_block, end_block, out));
  const uint64_t first = FirstUnverified(first_block, end_block);
  if (first == end_block) return absl::OkStatus();
  const uint64_t skip = (first - first_block) * geometry().block_size();
  absl::ReaderMutexLock lock(&mu_);
  absl::Status status =
      verifier_.VerifyDataBlocks(first, AsBytes(*out).subspan(skip));
  if (!status.ok()) {
    out->clear();
    return Annotate(status);
  }
  MarkVerified(first, end_block);
  return absl::OkStatus();
}

uint64_t VerifiedBlob::FirstUnverified(uint64_t first_block,
                                       uint64_t end_block) const {
  if (verified_blocks_.empty()) return first_block;
  for (uint64_t i = first_block; i < end_block; ++i) {
    const uint64_t word =
        verified_blocks_[i / 64].load(std::memory_order_acquire);
    if ((word & (uint64_t{1} << (i % 64))) == 0) return i;
  }
  return end_block;
}

void VerifiedBlob::MarkVerified(uint64_t first_block, uint64_t end_block) {
  if (verified_blocks_.empty()) return;
  for (uint64_t i = first_block; i < end_block; ++i) {
    verified_blocks_[i / 64].fetch_or(uint64_t{1} << (i % 64),
                                      std::memory_order_release);
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
    RETURN_IF_ERROR(Annotate(blob_->ReadTree(
        geometry.Ordinal(id) * geometry.block_size(), AsMutableBytes(&block))));
    RETURN_IF_ERROR(Annotate(verifier_.AddTreeBlock(id, AsBytes(block))));
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
