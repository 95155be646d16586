// A LogStorage that keeps the tiles and entry bundles it reads in memory,
// within a byte budget, least recently used out first (lib/base/lru_cache).
// They never change once written: a full tile is fixed, and a partial one is
// named by its width. So a server proving statements reads each from its
// store once, not once per proof. Everything else (the checkpoint object,
// the state, staged batches) goes to the storage below every time.
//
// What it keeps is what the storage gave: callers check tiles against
// signed checkpoints as before (LogProver does), and a tile that fails the
// check keeps failing until it is evicted.

#ifndef VERITYD_LIB_TLOG_TILE_CACHE_H_
#define VERITYD_LIB_TLOG_TILE_CACHE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lib/base/lru_cache.h"
#include "lib/tlog/log_storage.h"

namespace verity::tlog {

// Thread-safe when the storage below is.
class TileCache : public LogStorage {
 public:
  TileCache(std::shared_ptr<LogStorage> below, uint64_t max_bytes);

  absl::StatusOr<std::string> Read(absl::string_view path) const override;
  absl::Status Write(absl::string_view path, absl::string_view bytes) override {
    return below_->Write(path, bytes);
  }
  absl::Status Delete(absl::string_view path) override {
    return below_->Delete(path);
  }
  absl::StatusOr<std::optional<Record>> ReadState() const override {
    return below_->ReadState();
  }
  absl::StatusOr<Record> WriteState(
      absl::string_view body,
      const std::optional<std::string>& expected) override {
    return below_->WriteState(body, expected);
  }

  // Tiles and bundles held, for tests.
  size_t size() const { return cache_->size(); }

 private:
  struct Object {
    std::string path;
    std::string bytes;
    uint64_t cached_bytes() const { return path.size() + bytes.size(); }
  };
  struct PathOf {
    using Key = std::string;
    const std::string& operator()(const Object& object) const {
      return object.path;
    }
  };

  const std::shared_ptr<LogStorage> below_;
  // Mutable through a pointer: reads fill it.
  const std::unique_ptr<LruCache<Object, PathOf>> cache_;
};

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_TILE_CACHE_H_
