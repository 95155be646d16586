// The server's check of its own store, as one unit: a blob kept open with its
// tree verified top-down from its digest, and every data block verified
// against that tree before it may be sent.

#ifndef VERITYD_SERVER_STORE_VERIFIED_BLOB_H_
#define VERITYD_SERVER_STORE_VERIFIED_BLOB_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/descriptor.h"
#include "lib/read_plan.h"
#include "lib/verified_tree.h"
#include "server/store/store.h"

namespace verity::server {

// Data blocks [first, end) of one read, read from the store once, and how far
// they are verified. Made fresh for each chunk by its owner (the read) and
// changed only by VerifiedBlob, it moves with its request from the thread that
// started it to the pool: blocks before `next` are never hashed again.
struct BlockRead {
  // Consecutive tree blocks of one level, as read from the store.
  struct TreeRun {
    TreeBlockId first;
    uint64_t count = 0;
    std::string bytes;
  };

  uint64_t first = 0;
  uint64_t end = 0;
  uint64_t next = 0;  // the first block not verified yet
  bool loaded = false;
  std::string data;
  // Tree blocks Fetch() read that the rest of the chunk needs, top level
  // first; VerifyRest() verifies them.
  std::vector<TreeRun> fetched_tree;

  bool verified() const { return loaded && next == end; }
};

// Thread-safe. Shares ownership of the open Blob, so it stays readable while in
// use even if the blob is deleted meanwhile. Memory: the verified tree blocks,
// at most the tree's size, and with verify_once a bit per data block.
class VerifiedBlob {
 public:
  // DATA_LOSS if the blob's descriptor does not hash to its digest. With
  // `verify_once` (dm-verity's check_at_most_once), a data block verified once
  // is remembered in a bitmap and not hashed again while this object lives:
  // for stores the operator trusts after the first read.
  static absl::StatusOr<std::shared_ptr<VerifiedBlob>> Create(
      std::shared_ptr<const Blob> blob, bool verify_once = false);

  const Blob& blob() const { return *blob_; }
  const ParsedDigest& digest() const { return blob_->digest(); }
  const TreeGeometry& geometry() const { return blob_->geometry(); }

  // A read in steps, so that it can start on one thread and finish on
  // another. Load() reads the data blocks (once), which must be local (see
  // IsLocal()). Fetch() reads whatever the read still lacks, the data blocks
  // and the tree blocks the rest needs, from wherever they are, and calls
  // `done` when they are in `read`: before returning if all of it was local,
  // else on the store's thread (which must not verify). VerifyCached()
  // verifies from `next` as far as the verified tree blocks already cached
  // reach, reading no tree blocks: cheap and bounded, for a completion
  // thread. VerifyRest() verifies (top-down) the tree blocks the rest needs,
  // those Fetch() read or, for a local blob, read now, then the rest.
  // DATA_LOSS names the blob and the first bad block's offset, and drops the
  // read's data; nothing of a bad read is kept.
  absl::Status Load(uint64_t first_block, uint64_t end_block, BlockRead* read);
  void Fetch(uint64_t first_block, uint64_t end_block, BlockRead* read,
             Blob::ReadDone done);
  absl::Status VerifyCached(BlockRead* read);
  absl::Status VerifyRest(BlockRead* read);

  // True if the data blocks [first_block, end_block) and the tree blocks they
  // need can be read without waiting on a network.
  bool IsLocal(uint64_t first_block, uint64_t end_block) const;

  // Starts reading, without waiting, the tree blocks that data blocks
  // [first_block, end_block) need and that are not verified yet.
  void PrefetchTree(uint64_t first_block, uint64_t end_block) const;
  // The same, and the data blocks too: read-ahead.
  void Prefetch(uint64_t first_block, uint64_t end_block) const;

  // Data blocks [first_block, end_block), or a tree block they need, failed
  // verification: asks the store to drop any copy it keeps of them (see
  // Blob::Forget), so that a read again comes from where the blob is stored.
  // True if there was a copy, and so reason to read again.
  bool Forget(uint64_t first_block, uint64_t end_block) const;

  // A copy of a verified tree block; NOT_FOUND if it is not verified.
  absl::StatusOr<std::string> VerifiedTreeBlock(TreeBlockId id) const;

  // True if every tree block that data blocks [first_block, end_block) need is
  // verified.
  bool TreeIsVerifiedFor(uint64_t first_block, uint64_t end_block) const;

  // What a cache charges for this blob: its verified tree and the bitmap.
  uint64_t cached_bytes() const {
    return tree_->cached_bytes() + verified_blocks_.size() * sizeof(uint64_t);
  }
  // Bytes of verified tree blocks held.
  uint64_t cached_tree_bytes() const {
    return tree_->verified_blocks() * geometry().block_size();
  }
  // Data blocks hashed so far: what the dispatch promises not to waste.
  uint64_t data_blocks_hashed() const {
    return data_blocks_hashed_.load(std::memory_order_relaxed);
  }

 private:
  VerifiedBlob(std::shared_ptr<const Blob> blob,
               std::shared_ptr<VerifiedTree> tree, bool verify_once);

  std::vector<BlockRead::TreeRun> TreeRunsFor(uint64_t first_block,
                                              uint64_t end_block) const;
  absl::Status AddFetchedTree(BlockRead* read);
  absl::Status VerifyTreeFor(uint64_t first_block, uint64_t end_block);
  // The first block at or after read.next that needs a tree block not
  // verified yet, or read.end.
  uint64_t CachedUpTo(const BlockRead& read) const;
  // Verifies [read->next, upto), skipping blocks the bitmap remembers.
  absl::Status VerifyLoaded(BlockRead* read, uint64_t upto);
  absl::Status Annotate(const absl::Status& status) const;
  bool IsMarkedVerified(uint64_t block) const;
  void MarkVerified(uint64_t block);

  const std::shared_ptr<const Blob> blob_;
  const std::shared_ptr<VerifiedTree> tree_;
  std::atomic<uint64_t> data_blocks_hashed_{0};
  // One bit per data block, set once verified; empty unless verify_once.
  // Atomic words, so readers of different ranges never contend on a lock.
  std::vector<std::atomic<uint64_t>> verified_blocks_;
};

// True if `status` is a DATA_LOSS that VerifiedBlob found in the blob's tree
// rather than in a data block.
bool IsTreeCorruption(const absl::Status& status);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_VERIFIED_BLOB_H_
