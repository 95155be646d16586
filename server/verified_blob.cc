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
    std::shared_ptr<const Blob> blob) {
  VerifierOptions options;
  options.max_block_size = blob->geometry().block_size();
  absl::StatusOr<MerkleVerifier> verifier =
      MerkleVerifier::Create(blob->descriptor(), blob->digest(), options);
  if (!verifier.ok()) {
    return absl::DataLossError(absl::StrCat("blob ", blob->digest_text(), ": ",
                                            verifier.status().message()));
  }
  return std::shared_ptr<VerifiedBlob>(
      new VerifiedBlob(std::move(blob), *std::move(verifier)));
}

absl::Status VerifiedBlob::ReadVerified(uint64_t first_block,
                                        uint64_t end_block, std::string* out) {
  RETURN_IF_ERROR(VerifyTreeFor(first_block, end_block));
  RETURN_IF_ERROR(ReadUnverified(*blob_, first_block, end_block, out));
  absl::ReaderMutexLock lock(&mu_);
  absl::Status status = verifier_.VerifyDataBlocks(first_block, AsBytes(*out));
  if (!status.ok()) out->clear();
  return Annotate(status);
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
