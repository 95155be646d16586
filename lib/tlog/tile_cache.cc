// TileCache (tile_cache.h).

#include "lib/tlog/tile_cache.h"

#include <utility>

#include "absl/strings/match.h"

namespace verity::tlog {

TileCache::TileCache(std::shared_ptr<LogStorage> below, uint64_t max_bytes)
    : below_(std::move(below)),
      cache_(std::make_unique<LruCache<Object, PathOf>>(
          LruCacheOptions{max_bytes})) {}

absl::StatusOr<std::string> TileCache::Read(absl::string_view path) const {
  // tile/<L>/..., tile/entries/...: both fixed once written.
  if (!absl::StartsWith(path, "tile/")) return below_->Read(path);
  absl::StatusOr<std::shared_ptr<Object>> object = cache_->FindOrCreate(
      std::string(path), [&]() -> absl::StatusOr<std::shared_ptr<Object>> {
        absl::StatusOr<std::string> bytes = below_->Read(path);
        if (!bytes.ok()) return bytes.status();
        return std::make_shared<Object>(
            Object{std::string(path), *std::move(bytes)});
      });
  if (!object.ok()) return object.status();
  return (*object)->bytes;
}

}  // namespace verity::tlog
