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
#include "server/store/cache/disk_cache.h"
#include "server/store/cache/slab_cache.h"
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

// Thread-safe, as the store it wraps.
class CachingStore final : public Store {
 public:
  // INVALID_ARGUMENT for a slab size outside [kMinSlabBytes, kMaxSlabBytes];
  // the disk cache's errors.
  static absl::StatusOr<std::unique_ptr<CachingStore>> Open(
      std::unique_ptr<Store> store, const CachingStoreOptions& options);

  absl::StatusOr<std::unique_ptr<PutWriter>> StartPut(
      const MerkleParams& params, const std::optional<ParsedDigest>& expected,
      std::optional<uint64_t> size) override {
    return store_->BeginPut(params, expected, size);
  }
  absl::StatusOr<std::shared_ptr<const Blob>> OpenBlob(
      const ParsedDigest& digest) const override;
  absl::StatusOr<NamedBlob> LookupName(absl::string_view name) const override {
    return store_->LookupName(name);
  }
  absl::StatusOr<BlobInfo> SetName(const ParsedDigest& digest,
                                   const NameWrite& write) override {
    return store_->SetName(digest, write);
  }
  absl::StatusOr<BlobInfo> Stat(const ParsedDigest& digest) const override {
    return store_->Stat(digest);
  }
  absl::StatusOr<std::vector<BlobInfo>> List(absl::string_view after,
                                             size_t limit) const override {
    return store_->List(after, limit);
  }
  // The blob's cached slabs stay until evicted: the same digest always names
  // the same bytes, so they are right for a copy put again, and a deleted
  // blob can no longer be opened.
  absl::Status DeleteBlob(const ParsedDigest& digest) override {
    return store_->DeleteBlob(digest);
  }
  absl::Status DeleteName(absl::string_view name) override {
    return store_->DeleteName(name);
  }
  absl::Status Quarantine(const ParsedDigest& digest,
                          absl::string_view reason) override {
    return store_->Quarantine(digest, reason);
  }
  std::optional<StoreTotals> Totals() const override {
    return store_->Totals();
  }
  bool IsLocal() const override { return store_->IsLocal(); }
  absl::Status CheckHealth() const override { return store_->CheckHealth(); }
  void Log(absl::string_view message) const override { store_->Log(message); }

  SlabCacheStats cache_stats() const { return cache_->stats(); }

 private:
  CachingStore(std::unique_ptr<Store> store, std::shared_ptr<SlabCache> cache)
      : cache_(std::move(cache)), store_(std::move(store)) {}

  // Destroyed after the store, whose fetches in flight complete into it when
  // the store goes.
  const std::shared_ptr<SlabCache> cache_;
  const std::unique_ptr<Store> store_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_CACHE_CACHING_STORE_H_
