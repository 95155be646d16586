// Implements CachingStore.

#include "server/store/cache/caching_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "server/store/cache/caching_blob.h"

namespace verity::server {

absl::StatusOr<std::unique_ptr<CachingStore>> CachingStore::Open(
    std::unique_ptr<Store> store, const CachingStoreOptions& options) {
  const uint64_t slab = options.slabs.slab_bytes;
  if (slab < kMinSlabBytes || slab > kMaxSlabBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the cache's slab size (--cache_slab_bytes) must be between ",
        kMinSlabBytes, " and ", kMaxSlabBytes, " bytes, not ", slab));
  }
  std::unique_ptr<DiskCache> disk;
  if (!options.disk.dir.empty()) {
    ASSIGN_OR_RETURN(disk, DiskCache::Open(options.disk));
  }
  return std::unique_ptr<CachingStore>(new CachingStore(
      std::move(store),
      std::make_shared<SlabCache>(options.slabs, std::move(disk))));
}

absl::StatusOr<std::shared_ptr<const Blob>> CachingStore::OpenBlob(
    const ParsedDigest& digest) const {
  ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob, store_->OpenBlob(digest));
  return std::make_shared<CachingBlob>(std::move(blob), cache_);
}

}  // namespace verity::server
