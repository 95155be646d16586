// How much of a Read stream the next chunk reads, as the kernel sizes its
// read-ahead: the window doubles while the client takes each message before
// the next chunk is ready (the stream then runs as fast as the server reads,
// and bigger chunks cost less per byte: fewer messages, hand-offs and
// wake-ups), and halves when a chunk is ready before the client took the
// previous one (the client sets the pace; what waits for it stays small).

#ifndef VERITYD_SERVER_RPC_CHUNK_WINDOW_H_
#define VERITYD_SERVER_RPC_CHUNK_WINDOW_H_

#include <cstdint>

namespace verity::server {

// Not thread-safe: one per stream, used by its chunk reads one at a time.
class ChunkWindow {
 public:
  // Between `min_blocks` (at least one) and `max_blocks` (at least
  // min_blocks); starts at min_blocks.
  ChunkWindow(uint64_t min_blocks, uint64_t max_blocks);

  // Blocks the next chunk reads.
  uint64_t blocks() const { return blocks_; }

  // A chunk was read; `client_waiting` if nothing was being written then.
  void OnChunkRead(bool client_waiting);

 private:
  const uint64_t min_blocks_;
  const uint64_t max_blocks_;
  uint64_t blocks_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_CHUNK_WINDOW_H_
