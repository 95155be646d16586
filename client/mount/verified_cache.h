// The verified bytes of a mount's files on a local disk, in aligned 1 MiB
// slabs by file digest (`--cache-dir`, `--cache-bytes`): a slab the page cache
// let go of is read from the disk instead of fetched again. Only verified
// bytes go in, and each comes back only if it is still what went in (the
// disk cache keeps every slab's SHA-256 in memory and checks each read): a
// file changed on the disk is a miss, fetched and verified again. Starts
// empty at every mount.
//
// Thread-safe.

#ifndef VERITYD_CLIENT_MOUNT_VERIFIED_CACHE_H_
#define VERITYD_CLIENT_MOUNT_VERIFIED_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "lib/base/buffer_pool.h"
#include "lib/cache/disk_cache.h"
#include "verity/digest.h"

namespace verity::mount {

// What the cache did. Counts since the mount.
struct VerifiedCacheStats {
  uint64_t hits = 0;      // slabs read from the disk
  uint64_t misses = 0;    // slabs fetched
  uint64_t bytes = 0;     // now: slab bytes on the disk
  uint64_t changed = 0;   // slabs refused: the disk did not hold what went in
  uint64_t failures = 0;  // slabs not written (a full queue or disk)
  uint64_t joined = 0;    // slabs a read waited for another read's fetch of
};

class VerifiedCache {
 public:
  static constexpr uint64_t kSlabBytes = uint64_t{1} << 20;

  // Fetches [offset, offset + length) of the file, every byte verified.
  using Fetch = absl::FunctionRef<absl::StatusOr<Buffer>(uint64_t offset,
                                                         uint64_t length)>;

  // Empties and takes DIR/slabs (DiskCache); INVALID_ARGUMENT without a
  // directory. What Read returns comes from `buffers`.
  static absl::StatusOr<std::unique_ptr<VerifiedCache>> Open(
      const std::string& dir, uint64_t max_bytes,
      std::shared_ptr<BufferPool> buffers);

  // Bytes [offset, offset + length) of the file `digest` of `size` bytes
  // (the range inside it): slabs on the disk read from it (only the pieces
  // the range needs, DiskCache::kCheckedPieceBytes), each run of missing
  // ones fetched whole (aligned, in one fetch) and cached. A slab another
  // read is fetching is not fetched again: this read waits for that fetch
  // and takes its bytes (or its error).
  absl::StatusOr<Buffer> Read(const sdk::Digest& digest, uint64_t size,
                              uint64_t offset, uint64_t length, Fetch fetch);
  // Fetches and caches whatever of the range is not cached (prefetch), and
  // returns once it is on the disk (so a prefetch never outruns the disk).
  absl::Status Fill(const sdk::Digest& digest, uint64_t size, uint64_t offset,
                    uint64_t length, Fetch fetch);

  uint64_t max_bytes() const { return max_bytes_; }
  VerifiedCacheStats stats() const;

 private:
  VerifiedCache(std::unique_ptr<DiskCache> disk, uint64_t max_bytes,
                std::shared_ptr<BufferPool> buffers)
      : disk_(std::move(disk)),
        buffers_(std::move(buffers)),
        max_bytes_(max_bytes) {}

  // Slabs [first, last] of the file, copying bytes [offset, end) of them to
  // `out` (if not null), which holds the range from `offset` on.
  absl::Status ReadSlabs(const sdk::Digest& digest, uint64_t size,
                         uint64_t first, uint64_t last, uint64_t offset,
                         uint64_t end, Fetch fetch, uint8_t* out);
  // One fetch of a run of slabs, which reads of them wait for.
  struct Flight {
    absl::Notification done;
    absl::Status status;                  // set before done
    std::shared_ptr<const Buffer> bytes;  // from file offset `begin`
    uint64_t begin = 0;
  };

  // The fetch of slab `index` under way, or null.
  std::shared_ptr<Flight> FlightOf(const std::string& key)
      ABSL_LOCKS_EXCLUDED(flights_mu_);
  // Slabs [first, ...] up to `last` that are neither cached nor being
  // fetched, registered as one new flight; the flight and its last slab.
  std::pair<std::shared_ptr<Flight>, uint64_t> Claim(const sdk::Digest& digest,
                                                     uint64_t first,
                                                     uint64_t last)
      ABSL_LOCKS_EXCLUDED(flights_mu_);
  // Fetches slabs [first, last] in one fetch as `flight`, caches each, and
  // copies bytes [offset, end) of them to `out` likewise.
  absl::Status FetchSlabs(const sdk::Digest& digest, uint64_t size,
                          uint64_t first, uint64_t last, uint64_t offset,
                          uint64_t end, Fetch fetch, uint8_t* out,
                          Flight& flight) ABSL_LOCKS_EXCLUDED(flights_mu_);

  const std::unique_ptr<DiskCache> disk_;
  const std::shared_ptr<BufferPool> buffers_;
  const uint64_t max_bytes_;
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> joined_{0};
  absl::Mutex flights_mu_;
  // The fetches under way, by slab key: each of a run's slabs names it.
  absl::flat_hash_map<std::string, std::shared_ptr<Flight>> flights_
      ABSL_GUARDED_BY(flights_mu_);
};

}  // namespace verity::mount

#endif  // VERITYD_CLIENT_MOUNT_VERIFIED_CACHE_H_
