// A bounded local-disk cache of byte strings by key, least recently used out
// first: what a replica keeps of a remote store's slabs beyond what memory
// holds (server/store/cache), and what `verity mount` keeps of the verified
// bytes the page cache let go of (client/mount). One file per entry under
// DIR/slabs, which the cache owns: it starts empty, as whatever was there
// before a crash is neither trusted nor needed.
//
// What the disk gives back is not trusted by default: the server verifies it
// like what comes from the store. With `check_reads`, the cache keeps the
// SHA-256 of each 64 KiB piece of an entry in memory from when it was
// written, a read reads and hashes the pieces that hold its range (no more),
// and a piece that does not match is a miss (and forgets the entry): for a
// caller that hands on what it cached without another check, so a file
// changed on the disk is never used.

#ifndef VERITYD_LIB_CACHE_DISK_CACHE_H_
#define VERITYD_LIB_CACHE_DISK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "lib/base/file_util.h"
#include "lib/base/lru_cache.h"

namespace verity {

struct DiskCacheOptions {
  // The cache's files go under DIR/slabs (made if missing, emptied at Open).
  std::string dir;
  // Bytes kept; beyond it the least recently used entries are deleted.
  uint64_t max_bytes = uint64_t{1} << 30;
  // Bytes waiting for the writer thread; more are not written.
  uint64_t max_pending_bytes = uint64_t{64} << 20;
  // Whether a read is checked against the SHA-256 taken at its write.
  bool check_reads = false;
};

// Thread-safe. Entries are written by a thread of its own, so that whoever
// fetched one never waits on the disk. Writes and reads go past the page
// cache (O_DIRECT) where the memory is page-aligned (a Buffer's is): no copy
// into it, which on a replica's cold read cost a quarter of its CPU, and no
// second copy in it of what the memory tier above (the server's memory
// cache, the kernel's pages of a mounted file) holds.
class DiskCache {
 public:
  // INVALID_ARGUMENT without a directory; FAILED_PRECONDITION if another
  // DiskCache has it (this process's or another's: DIR/lock is held locked
  // with flock while the cache is open, so that two never empty each
  // other's files); the error of making or emptying it.
  static absl::StatusOr<std::unique_ptr<DiskCache>> Open(
      const DiskCacheOptions& options);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;
  // Stops the writer; entries still pending are not written.
  ~DiskCache();

  // `key` is any string of file name characters ([A-Za-z0-9._:-]).
  bool Contains(absl::string_view key);
  // With check_reads, what one hash covers: the unit a read reads in.
  static constexpr uint64_t kCheckedPieceBytes = uint64_t{64} << 10;

  // Copies bytes [offset, offset + out.size()) of the entry into `out`.
  // False if it is not cached, or its file is short, unreadable or (with
  // check_reads) changed: it is then forgotten. With check_reads the pieces
  // that hold the range are read whole and hashed (straight into `out` when
  // the range is whole pieces).
  bool Read(absl::string_view key, uint64_t offset, absl::Span<uint8_t> out);
  // Queues `bytes` to be written as `key`; `owner` keeps them valid until
  // then. Not written if the queue is full, nor if any entry is forgotten
  // before the write lands.
  void Write(std::string key, absl::Span<const uint8_t> bytes,
             std::shared_ptr<const void> owner) ABSL_LOCKS_EXCLUDED(mu_);
  // Uncaches the entry; its file is deleted once no reader (or the writer
  // that just wrote it) still holds it. Writes queued before it are dropped
  // (they might hold its old bytes): forgetting is rare, so that costs
  // little, and no per-key record outlives it.
  void Forget(absl::string_view key) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until every write queued before the call has landed or failed: a
  // writer that must not outrun the disk (the queue would drop its writes)
  // waits for it.
  void AwaitWrites() ABSL_LOCKS_EXCLUDED(mu_);

  // Bytes on disk.
  uint64_t bytes() const { return files_.bytes(); }
  // Entries not written: dropped from a full queue, or failed (a full disk).
  uint64_t write_failures() const { return write_failures_.load(); }
  // Reads refused by check_reads: the file did not hold what was written.
  uint64_t changed_files() const { return changed_files_.load(); }

 private:
  // A cached entry's file, deleted when the entry goes (evicted or
  // forgotten) and nobody reads it any more. File names are unique, so an
  // entry cached again never shares the file of the one it replaces.
  struct File {
    std::string key;
    std::string path;
    uint64_t size = 0;
    // With check_reads: the SHA-256 of each kCheckedPieceBytes of what was
    // written (the last piece may be shorter).
    std::vector<std::string> sha256;
    ~File();
    uint64_t cached_bytes() const { return size; }
  };
  struct KeyOfFile {
    using Key = std::string;
    const std::string& operator()(const File& file) const { return file.key; }
  };
  struct Pending {
    std::string key;
    absl::Span<const uint8_t> bytes;
    std::shared_ptr<const void> owner;
    uint64_t forgets = 0;  // forgets_ when it was queued
  };

  DiskCache(const DiskCacheOptions& options, UniqueFd lock,
            std::string slab_dir);

  // Reads the file into `out` (from `offset`), checking it if asked to.
  bool ReadFile(const File& file, uint64_t offset, absl::Span<uint8_t> out);
  void RunWriter() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes the entry's file and indexes it, unless a Forget came after
  // `pending.forgets`.
  void WriteNow(const Pending& pending) ABSL_LOCKS_EXCLUDED(mu_);

  const DiskCacheOptions options_;
  const UniqueFd lock_;  // DIR/lock, flocked
  const std::string slab_dir_;
  LruCache<File, KeyOfFile> files_;
  std::atomic<uint64_t> next_file_{0};
  std::atomic<uint64_t> write_failures_{0};
  std::atomic<uint64_t> changed_files_{0};
  absl::Mutex mu_;
  std::deque<Pending> pending_ ABSL_GUARDED_BY(mu_);
  // Forget calls so far: what a queued write checks before it lands.
  uint64_t forgets_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Writes queued, and those the writer is done with, since Open.
  uint64_t queued_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t done_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread writer_;
};

}  // namespace verity

#endif  // VERITYD_LIB_CACHE_DISK_CACHE_H_
