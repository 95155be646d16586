// Implements ReadJob's chunking.

#include "server/dispatch/read_job.h"

#include <algorithm>
#include <utility>

namespace verity::server {

ReadJob::ReadJob(std::shared_ptr<VerifiedBlob> blob, BlockRange blocks,
                 PriorityClass priority_class,
                 std::shared_ptr<BufferPool> buffers)
    : blob_(std::move(blob)),
      blocks_(blocks),
      priority_class_(priority_class),
      buffers_(std::move(buffers)),
      next_(blocks.first) {}

uint64_t ReadJob::bytes() const {
  return blocks_.size() * blob_->geometry().block_size();
}

void ReadJob::StartChunk(uint64_t max_blocks) {
  const uint64_t end =
      std::min(blocks_.end, next_ + std::max<uint64_t>(1, max_blocks));
  chunk_ = std::make_shared<Chunk>(blob_, BlockRange{next_, end}, buffers_);
  // Its data blocks, as many tree blocks (far more than it needs), and the
  // top of the tree.
  chunk_repairs_left_ = static_cast<int>(std::min<uint64_t>(
      2 * (end - next_) + blob_->geometry().num_levels(), 1 << 20));
}

void ReadJob::RestartChunk() {
  chunk_ = std::make_shared<Chunk>(blob_, chunk_->blocks(), buffers_,
                                   /*reread=*/true);
}

Buffer ReadJob::TakeChunk() {
  next_ = chunk_->blocks().end;
  return chunk_->TakeData();
}

}  // namespace verity::server
