// The server's check of its own store, as one unit: a blob's tree verified
// top-down from its digest (and cached), and every data block verified against
// it before it may be sent.

#ifndef VERITYD_SERVER_STORE_VERIFIED_BLOB_H_
#define VERITYD_SERVER_STORE_VERIFIED_BLOB_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/merkle_verifier.h"
#include "server/store/blob_store.h"

namespace verity::server {

// Data blocks [first, end) of one read, read from the store once, and how far
// they are verified. It moves with its request from the thread that started it
// to the pool: blocks before `next` are never hashed again.
struct BlockRead {
  uint64_t first = 0;
  uint64_t end = 0;
  uint64_t next = 0;  // the first block not verified yet
  bool loaded = false;
  std::string data;

  bool verified() const { return loaded && next == end; }
};

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

  // The same in steps, so a read can start on one thread and finish on
  // another. Load() reads the data (once). VerifyCached() verifies from
  // `next` as far as the verified tree blocks already cached reach, reading no
  // tree blocks: cheap and bounded, for a completion thread. VerifyRest()
  // reads and verifies the tree blocks the rest needs, then the rest. On
  // DATA_LOSS the read's data is dropped.
  absl::Status Load(uint64_t first_block, uint64_t end_block, BlockRead* read);
  absl::Status VerifyCached(BlockRead* read);
  absl::Status VerifyRest(BlockRead* read);

  // Starts reading, without waiting, the tree blocks that data blocks
  // [first_block, end_block) need and that are not verified yet.
  void PrefetchTree(uint64_t first_block, uint64_t end_block) const;

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
  // Data blocks hashed so far: what the dispatch promises not to waste.
  uint64_t data_blocks_hashed() const {
    return data_blocks_hashed_.load(std::memory_order_relaxed);
  }

 private:
  VerifiedBlob(std::shared_ptr<const Blob> blob, MerkleVerifier verifier,
               bool verify_once);

  absl::Status VerifyTreeFor(uint64_t first_block, uint64_t end_block)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The first block at or after read->next whose level-0 tree block is not
  // verified yet, or read->end.
  uint64_t CachedUpTo(const BlockRead& read) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Verifies [read->next, upto), skipping blocks the bitmap remembers.
  absl::Status VerifyLoaded(BlockRead* read, uint64_t upto)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status Annotate(const absl::Status& status) const;
  bool IsMarkedVerified(uint64_t block) const;
  void MarkVerified(uint64_t block);

  const std::shared_ptr<const Blob> blob_;
  mutable absl::Mutex mu_;
  MerkleVerifier verifier_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> cached_tree_bytes_{0};
  std::atomic<uint64_t> data_blocks_hashed_{0};
  // One bit per data block, set once verified; empty unless verify_once.
  // Atomic words, so readers of different ranges never contend on a lock.
  std::vector<std::atomic<uint64_t>> verified_blocks_;
};

// True if `status` is a DATA_LOSS that VerifiedBlob found in the blob's tree
// rather than in a data block.
bool IsTreeCorruption(const absl::Status& status);

// Reads data blocks [first_block, end_block) without verifying them, for
// --verify_on_read=false (benchmarks and diagnostics only).
absl::Status ReadUnverified(const Blob& blob, uint64_t first_block,
                            uint64_t end_block, std::string* out);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_VERIFIED_BLOB_H_
