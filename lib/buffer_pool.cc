// Implements Buffer and BufferPool.

#include "lib/buffer_pool.h"

#include <utility>

namespace verity {
namespace {

// `new uint8_t[n]` default-initializes: the bytes are left as they are,
// where make_unique<uint8_t[]>(n) would zero them.
std::unique_ptr<uint8_t[]> Uninitialized(size_t size) {
  return std::unique_ptr<uint8_t[]>(new uint8_t[size]);
}

}  // namespace

Buffer Buffer::Allocate(size_t size) {
  if (size == 0) return Buffer();
  return Buffer(Uninitialized(size), size, nullptr);
}

Buffer::Buffer(std::unique_ptr<uint8_t[]> memory, size_t size,
               std::shared_ptr<BufferPool> pool)
    : memory_(std::move(memory)), size_(size), pool_(std::move(pool)) {}

Buffer::Buffer(Buffer&& other) noexcept
    : memory_(std::move(other.memory_)),
      size_(other.size_),
      pool_(std::move(other.pool_)) {
  other.size_ = 0;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Release();
    memory_ = std::move(other.memory_);
    size_ = other.size_;
    pool_ = std::move(other.pool_);
    other.size_ = 0;
  }
  return *this;
}

void Buffer::Release() {
  size_ = 0;
  // The pool outlives the return: this holds it until the call is done, and
  // may then be its last holder.
  if (pool_ != nullptr && memory_ != nullptr) {
    pool_->Return(std::move(memory_));
  }
  memory_.reset();
  pool_.reset();
}

std::shared_ptr<BufferPool> BufferPool::Create(
    const BufferPoolOptions& options) {
  return std::shared_ptr<BufferPool>(new BufferPool(options));
}

BufferPool::BufferPool(const BufferPoolOptions& options) : options_(options) {
  // Returns then never grow the vector under the lock.
  if (options_.buffer_bytes > 0) {
    idle_.reserve(options_.max_idle_bytes / options_.buffer_bytes);
  }
}

Buffer BufferPool::Take(size_t size) {
  if (size == 0) return Buffer();
  if (size > options_.buffer_bytes) {
    {
      absl::MutexLock lock(&mu_);
      ++stats_.one_off;
    }
    return Buffer(Uninitialized(size), size, nullptr);
  }
  std::unique_ptr<uint8_t[]> memory;
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      memory = std::move(idle_.back());
      idle_.pop_back();
      stats_.idle_bytes -= options_.buffer_bytes;
      ++stats_.reused;
    } else {
      ++stats_.allocated;
    }
  }
  // Allocated outside the lock: a fresh buffer may fault its pages in.
  if (memory == nullptr) memory = Uninitialized(options_.buffer_bytes);
  return Buffer(std::move(memory), size, shared_from_this());
}

void BufferPool::Return(std::unique_ptr<uint8_t[]> memory) {
  {
    absl::MutexLock lock(&mu_);
    if (stats_.idle_bytes + options_.buffer_bytes <= options_.max_idle_bytes) {
      idle_.push_back(std::move(memory));
      stats_.idle_bytes += options_.buffer_bytes;
      return;
    }
    ++stats_.freed;
  }
  // `memory` is freed here, outside the lock.
}

BufferPoolStats BufferPool::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace verity
