// One blob's Merkle tree as far as it has been verified, shared by threads:
// the server's streams check its store against it, the SDK's streams check
// what a server sent. Tree blocks are added under an exclusive lock and data is
// verified under a shared one, so the streams of one blob verify data in
// parallel and never hash a tree block twice.

#ifndef VERITYD_LIB_TREE_VERIFIED_TREE_H_
#define VERITYD_LIB_TREE_VERIFIED_TREE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "lib/base/byte_chain.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "lib/tree/merkle_verifier.h"
#include "lib/tree/read_plan.h"

namespace verity {

// Thread-safe. Errors are MerkleVerifier's: DATA_LOSS for content that does
// not verify, INVALID_ARGUMENT for the caller's own bad input. Memory: the
// verified tree blocks, at most the tree's size, which cached_bytes() counts.
class VerifiedTree {
 public:
  // What cached_bytes() charges besides the blocks' bytes: for the tree, and
  // for each verified block.
  static constexpr uint64_t kTreeOverheadBytes = 1024;
  static constexpr uint64_t kBlockOverheadBytes = 64;

  // Authenticates `descriptor` by `trusted`: DATA_LOSS unless it hashes to
  // it, INVALID_ARGUMENT if its parameters exceed `options` (see
  // MerkleVerifier::Create). Holds no tree block yet.
  static absl::StatusOr<std::shared_ptr<VerifiedTree>> Create(
      const Descriptor& descriptor, const ParsedDigest& trusted,
      const VerifierOptions& options = {});

  VerifiedTree(const VerifiedTree&) = delete;
  VerifiedTree& operator=(const VerifiedTree&) = delete;

  // Immutable; no lock is taken.
  const ParsedDigest& digest() const { return digest_; }
  const Descriptor& descriptor() const { return descriptor_; }
  const TreeGeometry& geometry() const { return geometry_; }

  // The memory this tree holds, as a cache charges it: kTreeOverheadBytes
  // plus block_size + kBlockOverheadBytes per verified block.
  uint64_t cached_bytes() const {
    return kTreeOverheadBytes +
           verified_blocks() * (geometry_.block_size() + kBlockOverheadBytes);
  }
  // Tree blocks verified so far.
  uint64_t verified_blocks() const {
    return verified_blocks_.load(std::memory_order_relaxed);
  }

  bool IsVerified(TreeBlockId id) const ABSL_LOCKS_EXCLUDED(mu_);

  // The tree blocks that data blocks `blocks` need and that are not verified
  // yet, parents first (the order Add() takes them in). Empty if `blocks` is
  // empty or past the data.
  std::vector<TreeBlockId> Missing(BlockRange blocks) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Verifies `block` as tree block `id` against its parent, which must be
  // verified (the root hash for the top level), and keeps it. True if it was
  // new; false if the same bytes were verified before.
  absl::StatusOr<bool> Add(TreeBlockId id, absl::Span<const uint8_t> block)
      ABSL_LOCKS_EXCLUDED(mu_);

  // A copy of verified tree block `id`; NOT_FOUND if it is not verified.
  absl::StatusOr<std::string> Block(TreeBlockId id) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Verifies data block `index` (block_size bytes, or the rest of the blob for
  // the last one); its lowest-level tree block must be verified.
  absl::Status VerifyDataBlock(uint64_t index,
                               absl::Span<const uint8_t> data) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Verifies consecutive data blocks from `first_block`; `data` ends on a
  // block boundary or at the end of the blob.
  absl::Status VerifyData(uint64_t first_block,
                          absl::Span<const uint8_t> data) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // The same for data held in pieces.
  absl::Status VerifyData(uint64_t first_block, const ByteChain& data) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  explicit VerifiedTree(MerkleVerifier verifier, const ParsedDigest& digest);

  const ParsedDigest digest_;
  const Descriptor descriptor_;
  const TreeGeometry geometry_;
  mutable absl::Mutex mu_;
  MerkleVerifier verifier_ ABSL_GUARDED_BY(mu_);
  // Atomic, so that caches read it without the lock.
  std::atomic<uint64_t> verified_blocks_{0};
};

}  // namespace verity

#endif  // VERITYD_LIB_TREE_VERIFIED_TREE_H_
