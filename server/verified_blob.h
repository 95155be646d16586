// The server's check of its own store, as one unit: a blob's tree verified
// top-down from its digest (and cached), and every data block verified against
// it before it may be sent.

#ifndef VERITYD_SERVER_VERIFIED_BLOB_H_
#define VERITYD_SERVER_VERIFIED_BLOB_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/merkle_verifier.h"
#include "server/blob_store.h"

namespace verity::server {

// Thread-safe. Shares ownership of the open Blob, so it stays readable while in
// use even if the blob is deleted meanwhile. Memory: the verified tree blocks,
// at most the tree's size.
class VerifiedBlob {
 public:
  // DATA_LOSS if the blob's descriptor does not hash to its digest. With
  // `verify_once` (dm-verity's check_at_most_once), a data block verified once
  // is remembered in a bitmap and not hashed again while this object lives:
  // for stores the operator trusts after the first read.
  static absl::StatusOr<std::shared_ptr<VerifiedBlob>> Create(
      std::shared_ptr<const Blob> blob, bool verify_once = false);

  const Blob& blob() const { return *blob_; }
  const TreeGeometry& geometry() const { return blob_->geometry(); }

  // Reads data blocks [first_block, end_block) from the store into `out` and
  // verifies them, reading and verifying (top-down) whatever tree blocks they
  // need that are not cached yet. DATA_LOSS names the blob and the first bad
  // block's offset; nothing of a bad read is kept.
  absl::Status ReadVerified(uint64_t first_block, uint64_t end_block,
                            std::string* out);

  // A copy of a tree block verified by an earlier ReadVerified(); NOT_FOUND
  // otherwise.
  absl::StatusOr<std::string> VerifiedTreeBlock(TreeBlockId id) const;

  // True if every tree block that data blocks [first_block, end_block) need is
  // verified.
  bool TreeIsVerifiedFor(uint64_t first_block, uint64_t end_block) const;

  // Bytes of verified tree blocks held, for the cache's memory budget.
  uint64_t cached_tree_bytes() const {
    return cached_tree_bytes_.load(std::memory_order_relaxed);
  }

 private:
  VerifiedBlob(std::shared_ptr<const Blob> blob, MerkleVerifier verifier,
               bool verify_once);

  absl::Status VerifyTreeFor(uint64_t first_block, uint64_t end_block)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Annotate(const absl::Status& status) const;
  // With verify_once: the first block of [first_block, end_block) not yet
  // verified, or end_block if all are.
  uint64_t FirstUnverified(uint64_t first_block, uint64_t end_block) const;
  void MarkVerified(uint64_t first_block, uint64_t end_block);

  const std::shared_ptr<const Blob> blob_;
  mutable absl::Mutex mu_;
  MerkleVerifier verifier_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> cached_tree_bytes_{0};
  // One bit per data block, set once verified; empty unless verify_once.
  // Atomic words, so readers of different ranges never contend on a lock.
  std::vector<std::atomic<uint64_t>> verified_blocks_;
};

// Reads data blocks [first_block, end_block) without verifying them, for
// --verify_on_read=false (benchmarks and diagnostics only).
absl::Status ReadUnverified(const Blob& blob, uint64_t first_block,
                            uint64_t end_block, std::string* out);

}  // namespace verity::server

#endif  // VERITYD_SERVER_VERIFIED_BLOB_H_
