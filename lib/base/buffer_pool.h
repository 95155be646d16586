// Reusable byte buffers: a bounded pool of uninitialized buffers in a few
// power-of-two sizes, so that a read path that fills a buffer per chunk
// neither zero-fills it nor asks the allocator (and, past glibc's mmap
// threshold, the kernel) for fresh memory each time.

#ifndef VERITYD_LIB_BASE_BUFFER_POOL_H_
#define VERITYD_LIB_BASE_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace verity {

class BufferPool;

// Every buffer's first byte is aligned to a page, as O_DIRECT I/O asks of the
// memory it reads into or writes from (lib/cache/disk_cache writes so).
inline constexpr size_t kBufferAlignment = 4096;

namespace buffer_internal {
struct AlignedDelete {
  void operator()(uint8_t* memory) const;
};
}  // namespace buffer_internal
using BufferMemory = std::unique_ptr<uint8_t[], buffer_internal::AlignedDelete>;

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
  absl::string_view view() const {
    return {reinterpret_cast<const char*>(memory_.get()), size_};
  }

 private:
  friend class BufferPool;
  Buffer(BufferMemory memory, size_t size, size_t capacity,
         std::shared_ptr<BufferPool> pool);
  // Gives the memory back to its pool, or frees it; leaves this empty.
  void Release();

  BufferMemory memory_;
  size_t size_ = 0;
  size_t capacity_ = 0;
  std::shared_ptr<BufferPool> pool_;  // null: a one-off buffer
};

struct BufferPoolOptions {
  // The pool's buffer sizes: min_buffer_bytes, twice that, four times, ...,
  // and max_buffer_bytes last (the largest request the pool serves; a larger
  // one gets a one-off buffer, freed when it is destroyed). A request takes
  // the smallest size it fits, so a buffer is never more than twice what
  // was asked for (but for requests under min_buffer_bytes): small requests
  // do not pin, or make resident, a large buffer's memory.
  size_t min_buffer_bytes = size_t{4} << 10;
  size_t max_buffer_bytes = size_t{1} << 20;
  // Capacity kept idle for reuse, all sizes together. A buffer that comes
  // back beyond it first drops idle buffers of other sizes, largest first
  // (what is idle follows what is taken now), and is freed if that is not
  // enough room. Zero: nothing is kept (every Take() allocates).
  size_t max_idle_bytes = size_t{16} << 20;
};

// What a pool did. Counts since it was created, but for idle_bytes.
struct BufferPoolStats {
  uint64_t allocated = 0;  // pooled buffers allocated afresh
  uint64_t reused = 0;     // Take()s served from the idle buffers
  uint64_t one_off = 0;    // Take()s larger than max_buffer_bytes
  uint64_t freed = 0;      // pooled buffers freed (over the idle bound)
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

  // A buffer of `size` uninitialized bytes: an idle one of the smallest
  // size that holds it if there is one, else a new one (a one-off one if
  // `size` exceeds max_buffer_bytes; an empty one, from no pool, if `size`
  // is zero).
  Buffer Take(size_t size) ABSL_LOCKS_EXCLUDED(mu_);

  const BufferPoolOptions& options() const { return options_; }
  BufferPoolStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class Buffer;
  using Memory = BufferMemory;

  explicit BufferPool(const BufferPoolOptions& options);
  // The index of the smallest size that holds `size` (at most
  // max_buffer_bytes), and the capacity of size `index`.
  size_t SizeIndex(size_t size) const;
  size_t Capacity(size_t index) const { return capacities_[index]; }
  // Keeps `memory`, of `capacity` bytes, idle if the bound allows (making
  // room as BufferPoolOptions says), else frees it; frees outside the lock.
  void Return(Memory memory, size_t capacity) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether keeping `capacity` more bytes idle would exceed the bound.
  bool OverBound(size_t capacity) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves idle buffers of sizes other than `index`, largest first, to
  // `dropped` until one of size `index` fits the bound, if dropping them all
  // would make it fit.
  void DropOtherSizes(size_t index, std::vector<Memory>* dropped)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const BufferPoolOptions options_;
  std::vector<size_t> capacities_;  // ascending; the last max_buffer_bytes
  mutable absl::Mutex mu_;
  // Idle buffers per size index, the most recently returned last.
  std::vector<std::vector<Memory>> idle_ ABSL_GUARDED_BY(mu_);
  BufferPoolStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity

#endif  // VERITYD_LIB_BASE_BUFFER_POOL_H_
