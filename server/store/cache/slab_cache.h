// The bytes of a remote store's blobs, in slabs (slab.h): kept in memory
// within a budget and, with a disk cache, on a local disk too; fetched once
// however many reads want a slab at the same time; and fetched ahead of the
// reads that will want it (read-ahead), within a budget of bytes in flight.
// What it holds is as untrusted as the store it came from: every read from it
// is verified.

#ifndef VERITYD_SERVER_STORE_CACHE_SLAB_CACHE_H_
#define VERITYD_SERVER_STORE_CACHE_SLAB_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "lib/base/buffer_pool.h"
#include "lib/base/executor.h"
#include "lib/base/lru_cache.h"
#include "lib/cache/disk_cache.h"
#include "server/store/cache/slab.h"
#include "server/store/store.h"

namespace verity::server {

struct SlabCacheOptions {
  // The slab size: each fetch is one ranged read of this many bytes, aligned
  // to it.
  uint64_t slab_bytes = uint64_t{4} << 20;
  // Slabs kept in memory.
  uint64_t memory_bytes = uint64_t{64} << 20;
  // Slabs being fetched at once. Beyond it, read-ahead starts nothing and a
  // read fetches only the bytes it asked for, straight into its buffer: what
  // many readers of many blobs cost in memory stays bounded.
  uint64_t max_fetch_bytes = uint64_t{64} << 20;
};

// What the cache did, for metrics. Monotonic counts.
struct SlabCacheStats {
  uint64_t memory_hits = 0;    // slab reads answered from memory
  uint64_t disk_hits = 0;      // ... from the disk cache
  uint64_t misses = 0;         // ... that waited for the store
  uint64_t read_ahead = 0;     // slabs fetched before a read asked
  uint64_t fetched_bytes = 0;  // bytes fetched from the store
  uint64_t discarded = 0;      // slabs dropped as they failed verification
  uint64_t memory_bytes = 0;   // now: slab bytes in memory
  uint64_t disk_bytes = 0;     // now: slab bytes on disk
  uint64_t disk_failures = 0;  // slabs the disk cache did not write
};

// Thread-safe. `disk` may be null. Owned by a shared_ptr: the blobs it
// serves share it, and so do its fetches in flight, which may outlive the
// store that made it.
class SlabCache : public std::enable_shared_from_this<SlabCache> {
 public:
  SlabCache(const SlabCacheOptions& options, std::unique_ptr<DiskCache> disk);
  SlabCache(const SlabCache&) = delete;
  SlabCache& operator=(const SlabCache&) = delete;

  uint64_t slab_bytes() const { return options_.slab_bytes; }

  // Copies bytes [offset, offset + out.size()) of slab `key` into `out` if
  // the slab is in memory or on the disk cache (a local read), and says
  // whether it was: one lookup, so an eviction cannot come in between.
  bool TryRead(const SlabKey& key, uint64_t offset, absl::Span<uint8_t> out);

  // Fills `out` with bytes [offset, offset + out.size()) of slab `key` of
  // `source`, then calls `done`: always later, on the cache's thread or the
  // store's, never inside the call. `out` must stay valid until then (the
  // caller's completion owns it). A failed fetch caches nothing.
  void ReadAsync(std::shared_ptr<const Blob> source, const SlabKey& key,
                 uint64_t offset, absl::Span<uint8_t> out,
                 absl::AnyInvocable<void(absl::Status) &&> done)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Starts fetching slab `key` of `source`, unless it is cached, on its way,
  // or max_fetch_bytes are in flight. Returns at once.
  void Prefetch(std::shared_ptr<const Blob> source, const SlabKey& key)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Drops the slab from memory and disk: its bytes failed verification, or
  // were repaired. No fetch or disk write begun before it caches anything
  // (each may hold the old bytes; forgetting is rare, so that costs little).
  // True if it was cached.
  bool Forget(const SlabKey& key) ABSL_LOCKS_EXCLUDED(mu_);

  SlabCacheStats stats() const;

 private:
  using PieceDone = absl::AnyInvocable<void(absl::Status) &&>;
  // A read waiting for a slab on its way.
  struct Waiter {
    uint64_t offset;
    absl::Span<uint8_t> out;
    PieceDone done;
  };
  struct Fetch {
    uint64_t size = 0;     // charged to fetch_bytes_
    uint64_t forgets = 0;  // forgets_ when it started
    std::shared_ptr<Slab> slab;
    std::vector<Waiter> waiters;
  };

  // The size of slab `key` of `source`: slab_bytes, or less for the last.
  uint64_t SizeOf(const Blob& source, const SlabKey& key) const;
  // In memory or on disk now: a hint, for read-ahead and Forget().
  bool IsCached(const SlabKey& key);
  // ReadAsync() of a slab not in memory: from the disk cache, else fetched.
  void ReadDiskOrFetch(std::shared_ptr<const Blob> source, const SlabKey& key,
                       Waiter waiter);
  // Joins or starts the slab's fetch; over max_fetch_bytes, reads only the
  // waiter's bytes from `source`.
  void FetchFor(std::shared_ptr<const Blob> source, const SlabKey& key,
                Waiter waiter);
  enum class Fetching { kJoined, kStarted, kRefused, kCached };
  // Adds `waiter` (if any) to the fetch of `key` in flight, or starts one;
  // kRefused, with `waiter` left as it was, if that would exceed
  // max_fetch_bytes; kCached, the waiter served, if a fetch that finished
  // since the caller missed it put the slab in memory.
  Fetching JoinOrStart(const std::shared_ptr<const Blob>& source,
                       const SlabKey& key, std::optional<Waiter>& waiter)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Finish(const SlabKey& key, absl::StatusOr<Buffer> bytes)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Copies the waiter's bytes out of `slab` now; only its completion waits
  // for the cache's thread.
  void ServeFromMemory(const Slab& slab, Waiter waiter);
  // Runs `task` on the cache's thread.
  void Post(absl::AnyInvocable<void() &&> task);

  const SlabCacheOptions options_;
  const std::unique_ptr<DiskCache> disk_;
  LruCache<Slab, SlabKeyOf<Slab>> memory_;
  const std::shared_ptr<BufferPool> buffers_;  // the slabs' bytes
  absl::Mutex mu_;
  absl::flat_hash_map<SlabKey, std::shared_ptr<Fetch>> fetches_
      ABSL_GUARDED_BY(mu_);
  uint64_t fetch_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Forget calls so far: a fetch caches its slab only if none came since it
  // started.
  uint64_t forgets_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<uint64_t> memory_hits_{0};
  std::atomic<uint64_t> disk_hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> read_ahead_{0};
  std::atomic<uint64_t> fetched_bytes_{0};
  std::atomic<uint64_t> discarded_{0};
  // Completions of reads answered from memory, and disk-cache reads: the
  // last member, so that what it still runs finds the rest alive.
  Executor completions_{CompletionThreadOptions("slab-cache")};
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_CACHE_SLAB_CACHE_H_
