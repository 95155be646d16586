// Implements SlabCache.

#include "server/store/cache/slab_cache.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "lib/hash/hash.h"

namespace verity::server {
namespace {

LruCacheOptions MemoryOptions(const SlabCacheOptions& options) {
  LruCacheOptions memory;
  memory.max_bytes = options.memory_bytes;
  return memory;
}

void CopyOut(const Slab& slab, uint64_t offset, absl::Span<uint8_t> out) {
  std::memcpy(out.data(), slab.bytes.data() + offset, out.size());
}

// Slab buffers, reused as slabs leave the cache: a fresh buffer for each
// fetch had the kernel fault in and zero every page of it again
// (docs/tuning.md). A short slab takes a buffer at most twice its size.
BufferPoolOptions BuffersOptions(const SlabCacheOptions& options) {
  BufferPoolOptions buffers;
  buffers.min_buffer_bytes = std::min<size_t>(64 << 10, options.slab_bytes);
  buffers.max_buffer_bytes = options.slab_bytes;
  buffers.max_idle_bytes = 4 * options.slab_bytes;
  return buffers;
}

}  // namespace

SlabCache::SlabCache(const SlabCacheOptions& options,
                     std::unique_ptr<DiskCache> disk)
    : options_(options),
      disk_(std::move(disk)),
      memory_(MemoryOptions(options)),
      buffers_(BufferPool::Create(BuffersOptions(options))) {}

uint64_t SlabCache::SizeOf(const Blob& source, const SlabKey& key) const {
  const uint64_t part_size =
      PartSize(source.geometry(), source.fec_roots(), key.part);
  return std::min(options_.slab_bytes,
                  part_size - key.index * options_.slab_bytes);
}

bool SlabCache::IsCached(const SlabKey& key) {
  return memory_.Find(key) != nullptr ||
         (disk_ != nullptr && disk_->Contains(key.ToString()));
}

bool SlabCache::TryRead(const SlabKey& key, uint64_t offset,
                        absl::Span<uint8_t> out) {
  if (std::shared_ptr<Slab> slab = memory_.Find(key)) {
    CopyOut(*slab, offset, out);
    memory_hits_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  if (disk_ != nullptr && disk_->Read(key.ToString(), offset, out)) {
    disk_hits_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void SlabCache::Post(absl::AnyInvocable<void() &&> task) {
  // Unbounded: each task is a read in flight, which the callers bound.
  const absl::Status queued = completions_.Submit(std::move(task));
  (void)queued;
}

void SlabCache::ReadAsync(std::shared_ptr<const Blob> source,
                          const SlabKey& key, uint64_t offset,
                          absl::Span<uint8_t> out,
                          absl::AnyInvocable<void(absl::Status) &&> done) {
  Waiter waiter{offset, out, std::move(done)};
  if (std::shared_ptr<Slab> slab = memory_.Find(key)) {
    ServeFromMemory(*slab, std::move(waiter));
    return;
  }
  if (disk_ == nullptr) {
    FetchFor(std::move(source), key, std::move(waiter));
    return;
  }
  // The disk is read on the cache's thread, never the caller's.
  Post([this, source = std::move(source), key,
        waiter = std::move(waiter)]() mutable {
    ReadDiskOrFetch(std::move(source), key, std::move(waiter));
  });
}

void SlabCache::ServeFromMemory(const Slab& slab, Waiter waiter) {
  CopyOut(slab, waiter.offset, waiter.out);
  memory_hits_.fetch_add(1, std::memory_order_relaxed);
  Post([done = std::move(waiter.done)]() mutable {
    std::move(done)(absl::OkStatus());
  });
}

void SlabCache::ReadDiskOrFetch(std::shared_ptr<const Blob> source,
                                const SlabKey& key, Waiter waiter) {
  if (disk_->Read(key.ToString(), waiter.offset, waiter.out)) {
    disk_hits_.fetch_add(1, std::memory_order_relaxed);
    std::move(waiter.done)(absl::OkStatus());
    return;
  }
  FetchFor(std::move(source), key, std::move(waiter));
}

void SlabCache::FetchFor(std::shared_ptr<const Blob> source, const SlabKey& key,
                         Waiter waiter) {
  std::optional<Waiter> joining = std::move(waiter);
  const Fetching fetching = JoinOrStart(source, key, joining);
  if (fetching == Fetching::kCached) return;
  misses_.fetch_add(1, std::memory_order_relaxed);
  if (fetching != Fetching::kRefused) return;
  // Over budget: only the bytes asked for, into `out` when they arrive.
  fetched_bytes_.fetch_add(joining->out.size(), std::memory_order_relaxed);
  source->ReadAsync(key.part, key.index * options_.slab_bytes + joining->offset,
                    Buffer::Allocate(joining->out.size()),
                    [out = joining->out, done = std::move(joining->done)](
                        absl::StatusOr<Buffer> bytes) mutable {
                      if (bytes.ok())
                        std::memcpy(out.data(), bytes->data(), out.size());
                      std::move(done)(bytes.status());
                    });
}

void SlabCache::Prefetch(std::shared_ptr<const Blob> source,
                         const SlabKey& key) {
  if (IsCached(key)) return;
  std::optional<Waiter> none;
  if (JoinOrStart(source, key, none) == Fetching::kStarted) {
    read_ahead_.fetch_add(1, std::memory_order_relaxed);
  }
}

SlabCache::Fetching SlabCache::JoinOrStart(
    const std::shared_ptr<const Blob>& source, const SlabKey& key,
    std::optional<Waiter>& waiter) {
  std::shared_ptr<Fetch> fetch;
  std::shared_ptr<Slab> cached;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = fetches_.find(key); it != fetches_.end()) {
      if (waiter.has_value()) {
        it->second->waiters.push_back(*std::move(waiter));
        waiter.reset();
      }
      return Fetching::kJoined;
    }
    // A fetch that finished since the caller missed it put the slab in
    // memory as it left the map, under this lock: served from there.
    cached = memory_.Find(key);
    if (cached == nullptr) {
      const uint64_t size = SizeOf(*source, key);
      if (fetch_bytes_ + size > options_.max_fetch_bytes) {
        return Fetching::kRefused;
      }
      fetch_bytes_ += size;
      fetch = std::make_shared<Fetch>();
      fetch->size = size;
      fetch->forgets = forgets_;
      fetch->slab = std::make_shared<Slab>();
      fetch->slab->key = key;
      if (waiter.has_value()) {
        fetch->waiters.push_back(*std::move(waiter));
        waiter.reset();
      }
      fetches_.emplace(key, fetch);
    }
  }
  if (cached != nullptr) {
    if (waiter.has_value()) ServeFromMemory(*cached, *std::move(waiter));
    waiter.reset();
    return Fetching::kCached;
  }
  const uint64_t size = fetch->size;
  fetched_bytes_.fetch_add(size, std::memory_order_relaxed);
  // `source` rides along in the read: the blob stays open until its bytes
  // are here.
  source->ReadAsync(
      key.part, key.index * options_.slab_bytes, buffers_->Take(size),
      [self = shared_from_this(), key](absl::StatusOr<Buffer> bytes) {
        self->Finish(key, std::move(bytes));
      });
  return Fetching::kStarted;
}

void SlabCache::Finish(const SlabKey& key, absl::StatusOr<Buffer> bytes) {
  const absl::Status status = bytes.status();
  std::shared_ptr<Fetch> fetch;
  {
    absl::MutexLock lock(&mu_);
    fetch = fetches_.at(key);
    if (status.ok()) fetch->slab->bytes = *std::move(bytes);
    // Cached as the fetch leaves the map, so that a read finds it in one of
    // the two; not if anything was forgotten since it started, since it may
    // hold the bytes that were.
    if (status.ok() && fetch->forgets == forgets_) {
      memory_.Insert(fetch->slab);
      if (disk_ != nullptr) {
        disk_->Write(key.ToString(), fetch->slab->bytes.span(), fetch->slab);
      }
    }
    fetches_.erase(key);
    fetch_bytes_ -= fetch->size;
  }
  // No waiter joins once the fetch left the map.
  for (Waiter& waiter : fetch->waiters) {
    if (status.ok()) CopyOut(*fetch->slab, waiter.offset, waiter.out);
    std::move(waiter.done)(status);
  }
}

bool SlabCache::Forget(const SlabKey& key) {
  const bool cached = IsCached(key);
  {
    absl::MutexLock lock(&mu_);
    ++forgets_;
    memory_.Erase(key);
    if (disk_ != nullptr) disk_->Forget(key.ToString());
  }
  if (cached) discarded_.fetch_add(1, std::memory_order_relaxed);
  return cached;
}

SlabCacheStats SlabCache::stats() const {
  SlabCacheStats stats;
  stats.memory_hits = memory_hits_.load(std::memory_order_relaxed);
  stats.disk_hits = disk_hits_.load(std::memory_order_relaxed);
  stats.misses = misses_.load(std::memory_order_relaxed);
  stats.read_ahead = read_ahead_.load(std::memory_order_relaxed);
  stats.fetched_bytes = fetched_bytes_.load(std::memory_order_relaxed);
  stats.discarded = discarded_.load(std::memory_order_relaxed);
  stats.memory_bytes = memory_.bytes();
  if (disk_ != nullptr) {
    stats.disk_bytes = disk_->bytes();
    stats.disk_failures = disk_->write_failures();
  }
  return stats;
}

}  // namespace verity::server
