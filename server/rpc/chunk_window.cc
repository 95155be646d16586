// Implements ChunkWindow.

#include "server/rpc/chunk_window.h"

#include <algorithm>

namespace verity::server {

ChunkWindow::ChunkWindow(uint64_t min_blocks, uint64_t max_blocks,
                         uint64_t block_size, ByteBudget* budget)
    : min_blocks_(std::max<uint64_t>(1, min_blocks)),
      max_blocks_(std::max(min_blocks_, max_blocks)),
      block_size_(block_size),
      budget_(budget),
      blocks_(min_blocks_) {}

void ChunkWindow::OnChunkRead(bool client_waiting) {
  if (client_waiting) {
    const uint64_t grown = std::min(max_blocks_, blocks_ * 2);
    const uint64_t bytes = (grown - blocks_) * block_size_;
    if (bytes == 0 || !budget_->TryTake(bytes)) return;
    taken_ += bytes;
    blocks_ = grown;
    return;
  }
  const uint64_t shrunk = std::max(min_blocks_, blocks_ / 2);
  const uint64_t bytes = (blocks_ - shrunk) * block_size_;
  budget_->Give(bytes);
  taken_ -= bytes;
  blocks_ = shrunk;
}

}  // namespace verity::server
