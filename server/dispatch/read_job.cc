// Implements ReadJob's chunking.

#include "server/dispatch/read_job.h"

#include <algorithm>
#include <utility>

namespace verity::server {

ReadJob::ReadJob(std::shared_ptr<VerifiedBlob> blob, BlockRange blocks,
                 PriorityClass priority_class, uint64_t chunk_blocks)
    : blob_(std::move(blob)),
      blocks_(blocks),
      priority_class_(priority_class),
      chunk_blocks_(std::max<uint64_t>(1, chunk_blocks)),
      next_(blocks.first),
      chunk_end_(blocks.first) {}

uint64_t ReadJob::bytes() const {
  return blocks_.size() * blob_->geometry().block_size();
}

void ReadJob::StartChunk() {
  chunk_end_ = std::min(blocks_.end, next_ + chunk_blocks_);
  chunk_ = BlockRead();
}

std::string ReadJob::TakeChunk() {
  next_ = chunk_end_;
  return std::move(chunk_.data);
}

}  // namespace verity::server
