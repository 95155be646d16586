// One Read request as the dispatcher runs it: the blob and the blocks asked
// for, the priority class, the chunk being read, and where the request was
// placed.

#ifndef VERITYD_SERVER_DISPATCH_READ_JOB_H_
#define VERITYD_SERVER_DISPATCH_READ_JOB_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "lib/base/buffer_pool.h"
#include "lib/base/priority_class.h"
#include "lib/tree/read_plan.h"
#include "server/dispatch/chunk.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// Shared by the request (its read stream) and the dispatcher's work in flight
// for it, which holds it until that work has completed. Used by one thread at
// a time, handed over with each chunk read; only Cancel() may come from any
// thread.
class ReadJob {
 public:
  // Reads `blocks` of `blob`, a chunk at a time, into buffers from
  // `buffers`.
  ReadJob(std::shared_ptr<VerifiedBlob> blob, BlockRange blocks,
          PriorityClass priority_class, std::shared_ptr<BufferPool> buffers);

  ReadJob(const ReadJob&) = delete;
  ReadJob& operator=(const ReadJob&) = delete;

  VerifiedBlob& blob() const { return *blob_; }
  const std::shared_ptr<VerifiedBlob>& shared_blob() const { return blob_; }
  PriorityClass priority_class() const { return priority_class_; }
  // Every block the request asks for.
  BlockRange blocks() const { return blocks_; }
  // The whole request's data bytes: what the inline limits compare.
  uint64_t bytes() const;

  // True once every chunk was taken.
  bool done() const { return next_ == blocks_.end; }

  // Makes the next blocks, up to `max_blocks` (at least one), the current
  // chunk: a new one, not loaded. Not when done().
  void StartChunk(uint64_t max_blocks);
  // The current chunk. Work in flight holds its own reference.
  const std::shared_ptr<Chunk>& chunk() const { return chunk_; }
  BlockRange chunk_blocks() const { return chunk_->blocks(); }
  // Replaces the current chunk with a new one of the same blocks, to be read
  // once more; the old one is left to whatever still holds it.
  void RestartChunk();

  // FEC repairs the current chunk may still start: each rebuilds at least
  // one bad block for good, so a chunk needs at most one per data block and
  // tree block it reads; more means blocks that do not stay repaired.
  int chunk_repairs_left() const { return chunk_repairs_left_; }
  void CountChunkRepair() { --chunk_repairs_left_; }
  // Moves out the current chunk's data and moves past it.
  Buffer TakeChunk();

  // Where the dispatcher placed the request; the dispatcher's own state.
  struct Placement {
    bool placed = false;
    bool on_pool = false;  // once on the pool, a request stays there
  };
  Placement& placement() { return placement_; }

  // The client went away: pool work not yet started is skipped.
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  const std::shared_ptr<VerifiedBlob> blob_;
  const BlockRange blocks_;
  const PriorityClass priority_class_;
  const std::shared_ptr<BufferPool> buffers_;
  uint64_t next_;  // the first block not taken yet
  std::shared_ptr<Chunk> chunk_;
  int chunk_repairs_left_ = 0;
  Placement placement_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_READ_JOB_H_
