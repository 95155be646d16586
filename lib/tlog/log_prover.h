// Answers a reader of a log from the log's storage: inclusion and
// consistency proofs read from the tiles of a checkpoint's tree. Each proof
// is checked against the checkpoint it proves before it is returned, so
// tiles that were changed are DATA_LOSS here, not a wrong answer a client
// must catch.
//
// Thread-safe. Each call reads the checkpoint's tiles from the storage, or
// from a cache of them: tiles never change (a full tile is fixed, and a
// partial one is named by its width), and what a proof costs is mostly the
// subtree hashes within its tiles, which the cache keeps (TileTree).
//
// Two kinds of call, one contract each (as the store's TryReadNow and
// ReadAsync): Inclusion() and Consistency() may wait on the storage;
// TryInclusionNow() and TryConsistencyNow() read the cache only and answer
// nullopt, having read nothing from the storage, if it lacks a tile.

#ifndef VERITYD_LIB_TLOG_LOG_PROVER_H_
#define VERITYD_LIB_TLOG_LOG_PROVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "lib/base/lru_cache.h"
#include "lib/tlog/checkpoint.h"
#include "lib/tlog/log_storage.h"
#include "lib/tlog/merkle_log.h"
#include "lib/tlog/tiles.h"

namespace verity::tlog {

class LogProver {
 public:
  // `tile_cache_bytes`: the tiles kept across calls, least recently used
  // out first (0: none); and a 64th of it for consistency proofs, checked
  // once and kept by their two sizes (readers report few sizes at a time:
  // the checkpoints a server recently served).
  explicit LogProver(std::shared_ptr<const LogStorage> storage,
                     uint64_t tile_cache_bytes = 0);

  // The proof that entry `index` is in the tree of `checkpoint`, checked:
  // INVALID_ARGUMENT unless index < its size.
  absl::StatusOr<std::vector<LogHash>> Inclusion(
      uint64_t index, absl::string_view entry,
      const Checkpoint& checkpoint) const;

  // The proof that the tree of `new_size` entries extends the one of
  // `old_size`, both trees of `checkpoint`'s log and read from its tiles:
  // INVALID_ARGUMENT unless 0 < old_size <= new_size <= its size.
  absl::StatusOr<std::vector<LogHash>> Consistency(
      uint64_t old_size, uint64_t new_size, const Checkpoint& checkpoint) const;

  // As Inclusion() and Consistency(), from the cached tiles only: nullopt
  // if one they need is not cached (always, without a cache).
  std::optional<absl::StatusOr<std::vector<LogHash>>> TryInclusionNow(
      uint64_t index, absl::string_view entry,
      const Checkpoint& checkpoint) const;
  std::optional<absl::StatusOr<std::vector<LogHash>>> TryConsistencyNow(
      uint64_t old_size, uint64_t new_size, const Checkpoint& checkpoint) const;

  // Reads into the cache the tiles on the right edge of `checkpoint`'s tree
  // (those every proof against it needs) and checks them against its root:
  // DATA_LOSS if they do not hash to it.
  absl::Status Warm(const Checkpoint& checkpoint) const;

 private:
  struct CachedTile {
    std::string path;
    std::shared_ptr<const TileTree> tree;
    uint64_t cached_bytes() const { return path.size() + tree->cached_bytes(); }
  };
  struct PathOf {
    using Key = std::string;
    const std::string& operator()(const CachedTile& tile) const {
      return tile.path;
    }
  };

  struct CachedProof {
    std::pair<uint64_t, uint64_t> sizes;
    std::vector<LogHash> hashes;
    uint64_t cached_bytes() const {
      return sizeof(CachedProof) + hashes.size() * sizeof(LogHash);
    }
  };
  struct SizesOf {
    using Key = std::pair<uint64_t, uint64_t>;
    const Key& operator()(const CachedProof& proof) const {
      return proof.sizes;
    }
  };

  // The tiles of the tree of `size` entries, through the cache; with
  // `missed`, from the cache only: a tile it lacks sets *missed and fails
  // the read.
  TileHashReader Tiles(uint64_t size, bool* missed = nullptr) const;
  // `prove` over the tiles of the tree of `size` entries in the cache:
  // nullopt if it needed one that is not there.
  std::optional<absl::StatusOr<std::vector<LogHash>>> FromCacheOnly(
      uint64_t size,
      absl::FunctionRef<absl::StatusOr<std::vector<LogHash>>(TileHashReader&)>
          prove) const;
  absl::StatusOr<std::vector<LogHash>> InclusionFrom(
      TileHashReader& reader, uint64_t index, absl::string_view entry,
      const Checkpoint& checkpoint) const;
  absl::StatusOr<std::vector<LogHash>> ConsistencyFrom(
      TileHashReader& reader, uint64_t old_size, uint64_t new_size,
      const Checkpoint& checkpoint) const;

  const std::shared_ptr<const LogStorage> storage_;
  const std::shared_ptr<LruCache<CachedTile, PathOf>> cache_;     // null: none
  const std::shared_ptr<LruCache<CachedProof, SizesOf>> proofs_;  // or none
};

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_LOG_PROVER_H_
