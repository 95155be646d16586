// A remote store with the slab cache in front of its blobs' bytes: reads of
// what is cached never wait on the network, read-ahead has somewhere to put
// what it fetches, and a warm read is served from memory or a local disk.
// Everything else goes straight to the store.

#ifndef VERITYD_SERVER_STORE_CACHE_CACHING_STORE_H_
#define VERITYD_SERVER_STORE_CACHE_CACHING_STORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/cache/disk_cache.h"
#include "server/store/cache/slab_cache.h"
#include "server/store/forwarding_store.h"
#include "server/store/store.h"

namespace verity::server {

// The slab sizes CachingStore::Open accepts.
inline constexpr uint64_t kMinSlabBytes = uint64_t{64} << 10;
inline constexpr uint64_t kMaxSlabBytes = uint64_t{64} << 20;

struct CachingStoreOptions {
  SlabCacheOptions slabs;
  // Empty: no disk cache.
  DiskCacheOptions disk;
};

// Thread-safe, as the store it wraps. Serves its blobs through the slab
// cache, and forwards every other call. A deleted blob's cached slabs stay
// until evicted: the same digest always names the same bytes, so they are
// right for a copy put again, and a deleted blob can no longer be opened.
class CachingStore final : public ForwardingStore {
 public:
  // INVALID_ARGUMENT for a slab size outside [kMinSlabBytes, kMaxSlabBytes];
  // the disk cache's errors.
  static absl::StatusOr<std::unique_ptr<CachingStore>> Open(
      std::unique_ptr<Store> store, const CachingStoreOptions& options);

  absl::StatusOr<std::shared_ptr<const Blob>> OpenBlob(
      const ParsedDigest& digest) const override;

  SlabCacheStats cache_stats() const { return cache_->stats(); }

 private:
  CachingStore(std::unique_ptr<Store> store, std::shared_ptr<SlabCache> cache)
      : ForwardingStore(*store),
        cache_(std::move(cache)),
        store_(std::move(store)) {}

  // Destroyed after the store, whose fetches in flight complete into it when
  // the store goes.
  const std::shared_ptr<SlabCache> cache_;
  const std::unique_ptr<Store> store_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_CACHE_CACHING_STORE_H_
