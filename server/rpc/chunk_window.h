// How much of a Read stream the next chunk reads, as the kernel sizes its
// read-ahead: the window doubles while the client takes each message before
// the next chunk is ready (the stream then runs as fast as the server reads,
// and bigger chunks cost less per byte: fewer messages, hand-offs and
// wake-ups), and halves when a chunk is ready before the client took the
// previous one (the client sets the pace; what waits for it stays small).
// What the windows of all streams grow by is drawn from one ByteBudget, so
// many streams cannot make the server's buffers grow without bound.

#ifndef VERITYD_SERVER_RPC_CHUNK_WINDOW_H_
#define VERITYD_SERVER_RPC_CHUNK_WINDOW_H_

#include <cstdint>

#include "lib/base/byte_budget.h"

namespace verity::server {

// Not thread-safe: one per stream, used by its chunk reads one at a time.
// Gives back what it took from the budget when destroyed.
class ChunkWindow {
 public:
  // Between `min_blocks` (at least one) and `max_blocks` (at least
  // min_blocks) of `block_size` bytes; starts at min_blocks. `budget` must
  // outlive the window.
  ChunkWindow(uint64_t min_blocks, uint64_t max_blocks, uint64_t block_size,
              ByteBudget* budget);
  ~ChunkWindow() { budget_->Give(taken_); }

  ChunkWindow(const ChunkWindow&) = delete;
  ChunkWindow& operator=(const ChunkWindow&) = delete;

  // Blocks the next chunk reads.
  uint64_t blocks() const { return blocks_; }

  // A chunk was read; `client_waiting` if nothing was being written then.
  // Grows only as far as the budget allows.
  void OnChunkRead(bool client_waiting);

 private:
  const uint64_t min_blocks_;
  const uint64_t max_blocks_;
  const uint64_t block_size_;
  ByteBudget* const budget_;
  uint64_t blocks_;
  uint64_t taken_ = 0;  // bytes taken from the budget
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_CHUNK_WINDOW_H_
