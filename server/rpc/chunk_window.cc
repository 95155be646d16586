// Implements ChunkWindow.

#include "server/rpc/chunk_window.h"

#include <algorithm>

namespace verity::server {

ChunkWindow::ChunkWindow(uint64_t min_blocks, uint64_t max_blocks)
    : min_blocks_(std::max<uint64_t>(1, min_blocks)),
      max_blocks_(std::max(min_blocks_, max_blocks)),
      blocks_(min_blocks_) {}

void ChunkWindow::OnChunkRead(bool client_waiting) {
  blocks_ = client_waiting ? std::min(max_blocks_, blocks_ * 2)
                           : std::max(min_blocks_, blocks_ / 2);
}

}  // namespace verity::server
