// Implements VerifiedTree as a MerkleVerifier behind a reader-writer lock.

#include "lib/tree/verified_tree.h"

#include <utility>

#include "lib/base/status_macros.h"

namespace verity {

absl::StatusOr<std::shared_ptr<VerifiedTree>> VerifiedTree::Create(
    const Descriptor& descriptor, const ParsedDigest& trusted,
    const VerifierOptions& options) {
  ASSIGN_OR_RETURN(MerkleVerifier verifier,
                   MerkleVerifier::Create(descriptor, trusted, options));
  return std::shared_ptr<VerifiedTree>(
      new VerifiedTree(std::move(verifier), trusted));
}

VerifiedTree::VerifiedTree(MerkleVerifier verifier, const ParsedDigest& digest)
    : digest_(digest),
      descriptor_(verifier.descriptor()),
      geometry_(verifier.geometry()),
      verifier_(std::move(verifier)) {}

bool VerifiedTree::IsVerified(TreeBlockId id) const {
  absl::ReaderMutexLock lock(&mu_);
  return verifier_.IsTreeBlockVerified(id);
}

std::vector<TreeBlockId> VerifiedTree::Missing(BlockRange blocks) const {
  std::vector<TreeBlockId> ids = TreeBlocksFor(geometry_, blocks);
  absl::ReaderMutexLock lock(&mu_);
  std::vector<TreeBlockId> missing;
  for (const TreeBlockId& id : ids) {
    if (!verifier_.IsTreeBlockVerified(id)) missing.push_back(id);
  }
  return missing;
}

absl::StatusOr<bool> VerifiedTree::Add(TreeBlockId id,
                                       absl::Span<const uint8_t> block) {
  absl::MutexLock lock(&mu_);
  const bool known = verifier_.IsTreeBlockVerified(id);
  RETURN_IF_ERROR(verifier_.AddTreeBlock(id, block));
  if (known) return false;
  verified_blocks_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

absl::StatusOr<std::string> VerifiedTree::Block(TreeBlockId id) const {
  absl::ReaderMutexLock lock(&mu_);
  ASSIGN_OR_RETURN(const absl::Span<const uint8_t> block,
                   verifier_.VerifiedTreeBlock(id));
  return std::string(block.begin(), block.end());
}

absl::Status VerifiedTree::VerifyDataBlock(
    uint64_t index, absl::Span<const uint8_t> data) const {
  absl::ReaderMutexLock lock(&mu_);
  return verifier_.VerifyDataBlock(index, data);
}

absl::Status VerifiedTree::VerifyData(uint64_t first_block,
                                      absl::Span<const uint8_t> data) const {
  absl::ReaderMutexLock lock(&mu_);
  return verifier_.VerifyDataBlocks(first_block, data);
}

absl::Status VerifiedTree::VerifyData(uint64_t first_block,
                                      const ByteChain& data) const {
  absl::ReaderMutexLock lock(&mu_);
  return verifier_.VerifyDataBlocks(first_block, data);
}

}  // namespace verity
