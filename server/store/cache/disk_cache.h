// A bounded local-disk cache of slabs, least recently used out first: what a
// replica keeps of a remote store's blobs beyond what memory holds, so that a
// warm read comes from a local disk instead of the network. One file per slab
// under DIR/slabs, which the cache owns: it starts empty, as whatever was
// there before a crash is neither trusted nor needed. Nothing read from it is
// trusted either: it is verified like what comes from the store.

#ifndef VERITYD_SERVER_STORE_CACHE_DISK_CACHE_H_
#define VERITYD_SERVER_STORE_CACHE_DISK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "lib/base/lru_cache.h"
#include "server/store/cache/slab.h"

namespace verity::server {

struct DiskCacheOptions {
  // The cache's files go under DIR/slabs (made if missing, emptied at Open).
  std::string dir;
  // Slab bytes kept; beyond it the least recently used are deleted.
  uint64_t max_bytes = uint64_t{1} << 30;
  // Slabs waiting for the writer thread; more are not written.
  uint64_t max_pending_bytes = uint64_t{64} << 20;
};

// Thread-safe. Slabs are written by a thread of its own, so that whoever
// fetched one never waits on the disk; reads are preads, as a file store's
// are.
class DiskCache {
 public:
  // INVALID_ARGUMENT without a directory; the error of making or emptying it.
  static absl::StatusOr<std::unique_ptr<DiskCache>> Open(
      const DiskCacheOptions& options);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;
  // Stops the writer; slabs still pending are not written.
  ~DiskCache();

  bool Contains(const SlabKey& key);
  // Copies bytes [offset, offset + out.size()) of the cached slab into `out`.
  // False if the slab is not cached, or its file is short or unreadable (it
  // is then forgotten).
  bool Read(const SlabKey& key, uint64_t offset, absl::Span<uint8_t> out);
  // Queues `slab` to be written; not written if the queue is full, nor if
  // any slab is forgotten before the write lands.
  void Write(std::shared_ptr<const Slab> slab) ABSL_LOCKS_EXCLUDED(mu_);
  // Uncaches the slab; its file is deleted once no reader (or the writer
  // that just wrote it) still holds it. Writes queued before it are dropped
  // (they might hold its old bytes): forgetting is rare, so that costs
  // little, and no per-key record outlives it.
  void Forget(const SlabKey& key) ABSL_LOCKS_EXCLUDED(mu_);

  // Slab bytes on disk.
  uint64_t bytes() const { return files_.bytes(); }
  // Slabs not written: dropped from a full queue, or failed (a full disk).
  uint64_t write_failures() const { return write_failures_.load(); }

 private:
  // A cached slab's file, deleted when the entry goes (evicted or forgotten)
  // and nobody reads it any more. File names are unique, so a slab cached
  // again never shares the file of the entry it replaces.
  struct File {
    SlabKey key;
    std::string path;
    uint64_t size = 0;
    ~File();
    uint64_t cached_bytes() const { return size; }
  };

  DiskCache(const DiskCacheOptions& options, std::string slab_dir);
  struct Pending {
    std::shared_ptr<const Slab> slab;
    uint64_t forgets = 0;  // forgets_ when it was queued
  };

  void RunWriter() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes the slab's file and indexes it, unless a Forget came after
  // `forgets`.
  void WriteNow(const Slab& slab, uint64_t forgets) ABSL_LOCKS_EXCLUDED(mu_);

  const DiskCacheOptions options_;
  const std::string slab_dir_;
  LruCache<File, SlabKeyOf<File>> files_;
  std::atomic<uint64_t> next_file_{0};
  std::atomic<uint64_t> write_failures_{0};
  absl::Mutex mu_;
  std::deque<Pending> pending_ ABSL_GUARDED_BY(mu_);
  // Forget calls so far: what a queued write checks before it lands.
  uint64_t forgets_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread writer_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_CACHE_DISK_CACHE_H_
