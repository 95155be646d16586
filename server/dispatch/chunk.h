// One chunk of a Read: data blocks [first, end) of a blob, read from the store
// once and verified in steps, so that it can start on a completion thread and
// finish on the pool. The order of the steps, and what each leaves behind, is
// this class's alone.

#ifndef VERITYD_SERVER_DISPATCH_CHUNK_H_
#define VERITYD_SERVER_DISPATCH_CHUNK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "lib/base/buffer_pool.h"
#include "lib/tree/read_plan.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// Used by one thread at a time: it moves with its request from the thread
// that started it to the pool, and through its own asynchronous reads. Those
// hold the chunk (shared_ptr) and write only into buffers of their own until
// they complete, so a chunk that was cancelled or replaced is never written
// after it is gone. Blocks before next() are never hashed again. Whatever
// fails verification, nothing of the chunk's data is kept: its buffer goes
// back to the pool, whose next taker overwrites it before reading it. Every
// buffer, the data's and the tree blocks', comes from `buffers`
// uninitialized, and is filled by a read of the store or dropped.
class Chunk : public std::enable_shared_from_this<Chunk> {
 public:
  using Done = absl::AnyInvocable<void(absl::Status) &&>;

  // `blocks` must be a non-empty range of the blob's data blocks. `reread`:
  // the chunk is read once more after its first read failed verification.
  Chunk(std::shared_ptr<VerifiedBlob> blob, BlockRange blocks,
        std::shared_ptr<BufferPool> buffers, bool reread = false);

  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  VerifiedBlob& blob() const { return *blob_; }
  BlockRange blocks() const { return blocks_; }
  // The first block not verified yet.
  uint64_t next() const { return next_; }
  bool loaded() const { return loaded_; }
  bool verified() const { return loaded_ && next_ == blocks_.end; }
  uint64_t data_bytes() const { return data_.size(); }
  bool reread() const { return reread_; }

  // Reads the data blocks now if the store has them here; nullopt, with
  // nothing started, if it does not. OK at once if loaded already.
  std::optional<absl::Status> TryLoadNow();

  // Verifies, from next(), as far as the verified tree blocks already cached
  // reach, reading no tree block: cheap and bounded, for a completion
  // thread. Needs loaded().
  absl::Status VerifyCached();

  // Finishes the chunk now: the tree blocks FetchLater() brought, the data if
  // not loaded yet and the tree blocks still missing, read now, then every
  // block left verified. nullopt, with nothing started, if some of what it
  // needs is not here: FetchLater() then.
  std::optional<absl::Status> TryFinishNow();

  // Reads what the chunk still lacks (its data unless loaded, and the tree
  // blocks the rest needs) from wherever the store keeps it, then calls
  // `done`: always later, on the store's thread, which must not verify
  // (hand the chunk to TryFinishNow() elsewhere).
  void FetchLater(Done done);

  // Moves out the data: verified if verified(). The buffer goes back to the
  // pool when its last owner lets go of it.
  Buffer TakeData();

 private:
  // Consecutive tree blocks of one level, as read from the store.
  struct TreeRun {
    TreeBlockId first;
    uint64_t count = 0;
    Buffer bytes;
  };

  std::vector<TreeRun> MissingTreeRuns() const;
  absl::Status AddFetchedTree();
  // The tree blocks still missing, read now; nullopt if one is not here.
  std::optional<absl::Status> TryReadTreeNow();
  absl::Status Verify(uint64_t upto);
  // Drops the data after a failure.
  absl::Status Fail(absl::Status status);

  const std::shared_ptr<VerifiedBlob> blob_;
  const BlockRange blocks_;
  const std::shared_ptr<BufferPool> buffers_;
  const bool reread_;
  uint64_t next_;
  bool loaded_ = false;
  Buffer data_;
  // Tree blocks FetchLater() read that the rest needs, top level first.
  std::vector<TreeRun> fetched_tree_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_CHUNK_H_
