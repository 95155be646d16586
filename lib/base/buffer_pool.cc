// Implements Buffer and BufferPool.

#include "lib/base/buffer_pool.h"

#include <algorithm>
#include <new>
#include <utility>

namespace verity {
namespace {

// Page-aligned, and left as they are, where make_unique<uint8_t[]>(n) would
// zero them.
BufferMemory Uninitialized(size_t size) {
  return BufferMemory(static_cast<uint8_t*>(
      ::operator new[](size, std::align_val_t{kBufferAlignment})));
}

// min, 2 min, 4 min, ... below max, then max; none if max is zero.
std::vector<size_t> Capacities(const BufferPoolOptions& options) {
  std::vector<size_t> capacities;
  const size_t max = options.max_buffer_bytes;
  if (max == 0) return capacities;
  for (size_t size = std::max<size_t>(1, options.min_buffer_bytes); size < max;
       size *= 2) {
    capacities.push_back(size);
  }
  capacities.push_back(max);
  return capacities;
}

}  // namespace

void buffer_internal::AlignedDelete::operator()(uint8_t* memory) const {
  ::operator delete[](memory, std::align_val_t{kBufferAlignment});
}

Buffer Buffer::Allocate(size_t size) {
  if (size == 0) return Buffer();
  return Buffer(Uninitialized(size), size, size, nullptr);
}

Buffer::Buffer(BufferMemory memory, size_t size, size_t capacity,
               std::shared_ptr<BufferPool> pool)
    : memory_(std::move(memory)),
      size_(size),
      capacity_(capacity),
      pool_(std::move(pool)) {}

Buffer::Buffer(Buffer&& other) noexcept
    : memory_(std::move(other.memory_)),
      size_(other.size_),
      capacity_(other.capacity_),
      pool_(std::move(other.pool_)) {
  other.size_ = 0;
  other.capacity_ = 0;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Release();
    memory_ = std::move(other.memory_);
    size_ = other.size_;
    capacity_ = other.capacity_;
    pool_ = std::move(other.pool_);
    other.size_ = 0;
    other.capacity_ = 0;
  }
  return *this;
}

void Buffer::Release() {
  // The pool outlives the return: this holds it until the call is done, and
  // may then be its last holder.
  if (pool_ != nullptr && memory_ != nullptr) {
    pool_->Return(std::move(memory_), capacity_);
  }
  memory_.reset();
  size_ = 0;
  capacity_ = 0;
  pool_.reset();
}

std::shared_ptr<BufferPool> BufferPool::Create(
    const BufferPoolOptions& options) {
  return std::shared_ptr<BufferPool>(new BufferPool(options));
}

BufferPool::BufferPool(const BufferPoolOptions& options)
    : options_(options), capacities_(Capacities(options)) {
  idle_.resize(capacities_.size());
}

size_t BufferPool::SizeIndex(size_t size) const {
  return std::lower_bound(capacities_.begin(), capacities_.end(), size) -
         capacities_.begin();
}

Buffer BufferPool::Take(size_t size) {
  if (size == 0) return Buffer();
  const size_t index = SizeIndex(size);
  if (index == capacities_.size()) {
    {
      absl::MutexLock lock(&mu_);
      ++stats_.one_off;
    }
    return Buffer(Uninitialized(size), size, size, nullptr);
  }
  const size_t capacity = Capacity(index);
  Memory memory;
  {
    absl::MutexLock lock(&mu_);
    std::vector<Memory>& idle = idle_[index];
    if (!idle.empty()) {
      memory = std::move(idle.back());
      idle.pop_back();
      stats_.idle_bytes -= capacity;
      ++stats_.reused;
    } else {
      ++stats_.allocated;
    }
  }
  // Allocated outside the lock: a fresh buffer may fault its pages in.
  if (memory == nullptr) memory = Uninitialized(capacity);
  return Buffer(std::move(memory), size, capacity, shared_from_this());
}

bool BufferPool::OverBound(size_t capacity) const {
  return stats_.idle_bytes + capacity > options_.max_idle_bytes;
}

void BufferPool::DropOtherSizes(size_t index, std::vector<Memory>* dropped) {
  const size_t capacity = Capacity(index);
  const uint64_t same = idle_[index].size() * capacity;
  // Only if dropping them all would make room: else the returned buffer
  // goes, and what is idle stays.
  if (same + capacity > options_.max_idle_bytes) return;
  for (size_t i = idle_.size(); i-- > 0 && OverBound(capacity);) {
    if (i == index) continue;
    while (!idle_[i].empty() && OverBound(capacity)) {
      dropped->push_back(std::move(idle_[i].back()));
      idle_[i].pop_back();
      stats_.idle_bytes -= Capacity(i);
      ++stats_.freed;
    }
  }
}

void BufferPool::Return(Memory memory, size_t capacity) {
  const size_t index = SizeIndex(capacity);
  // Freed after the lock is released: freeing a large buffer unmaps it.
  std::vector<Memory> dropped;
  {
    absl::MutexLock lock(&mu_);
    if (OverBound(capacity)) DropOtherSizes(index, &dropped);
    if (!OverBound(capacity)) {
      idle_[index].push_back(std::move(memory));
      stats_.idle_bytes += capacity;
    } else {
      ++stats_.freed;
    }
  }
  // `memory` (unless kept) and `dropped` are freed here, outside the lock.
}

BufferPoolStats BufferPool::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace verity
