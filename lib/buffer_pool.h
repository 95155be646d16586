// Reusable byte buffers: a bounded pool of uninitialized buffers of one size,
// so that a read path that fills a buffer per chunk neither zero-fills it nor
// asks the allocator (and, past glibc's mmap threshold, the kernel) for fresh
// memory each time.

#ifndef VERITYD_LIB_BUFFER_POOL_H_
#define VERITYD_LIB_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace verity {

class BufferPool;

// Owns `size()` bytes that nobody initialized: whoever takes it must write
// every byte it later reads. Move-only; not thread-safe, but may be moved to
// and destroyed on any thread. A buffer from a BufferPool goes back to it when
// destroyed, and keeps the pool alive until then; any other (Allocate(), or
// one too large for its pool) is freed.
class Buffer {
 public:
  // Empty: no bytes, nothing owned.
  Buffer() = default;
  // A one-off buffer of `size` uninitialized bytes, from no pool.
  static Buffer Allocate(size_t size);

  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Release(); }

  uint8_t* data() { return memory_.get(); }
  const uint8_t* data() const { return memory_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  absl::Span<uint8_t> span() { return {memory_.get(), size_}; }
  absl::Span<const uint8_t> span() const { return {memory_.get(), size_}; }

 private:
  friend class BufferPool;
  Buffer(std::unique_ptr<uint8_t[]> memory, size_t size,
         std::shared_ptr<BufferPool> pool);
  // Gives the memory back to its pool, or frees it; leaves this empty.
  void Release();

  std::unique_ptr<uint8_t[]> memory_;
  size_t size_ = 0;
  std::shared_ptr<BufferPool> pool_;  // null: a one-off buffer
};

struct BufferPoolOptions {
  // Each pooled buffer's capacity: the largest request the pool serves. A
  // larger one gets a one-off buffer, freed when it is destroyed.
  size_t buffer_bytes = size_t{1} << 20;
  // Capacity kept idle for reuse; a buffer that comes back beyond it is
  // freed. Zero: nothing is kept (every Take() allocates).
  size_t max_idle_bytes = size_t{16} << 20;
};

// What a pool did. Counts since it was created, but for idle_bytes.
struct BufferPoolStats {
  uint64_t allocated = 0;  // pooled buffers allocated afresh
  uint64_t reused = 0;     // Take()s served from the idle buffers
  uint64_t one_off = 0;    // Take()s larger than buffer_bytes
  uint64_t freed = 0;      // pooled buffers freed on return (over the bound)
  uint64_t idle_bytes = 0;
};

// Thread-safe. Held by shared_ptr (Create()), and by every buffer it handed
// out: buffers are returned from wherever their last owner lets go of them
// (gRPC releases a sent message's slices on its own threads, perhaps after
// the server that sent it is gone), so the pool lives until its last user
// and its last buffer are both gone, and no return can find it destroyed.
class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  static std::shared_ptr<BufferPool> Create(const BufferPoolOptions& options);

  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of `size` uninitialized bytes: an idle one if there is one,
  // else a new one (a one-off one if `size` exceeds buffer_bytes; an empty
  // one, from no pool, if `size` is zero).
  Buffer Take(size_t size) ABSL_LOCKS_EXCLUDED(mu_);

  const BufferPoolOptions& options() const { return options_; }
  BufferPoolStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class Buffer;
  explicit BufferPool(const BufferPoolOptions& options);
  // Keeps `memory` (buffer_bytes of it) idle if the bound allows, else frees
  // it, outside the lock.
  void Return(std::unique_ptr<uint8_t[]> memory) ABSL_LOCKS_EXCLUDED(mu_);

  const BufferPoolOptions options_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<uint8_t[]>> idle_ ABSL_GUARDED_BY(mu_);
  BufferPoolStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity

#endif  // VERITYD_LIB_BUFFER_POOL_H_
