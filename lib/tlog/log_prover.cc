// Implements LogProver: proofs from the tiles, each verified before it is
// returned.

#include "lib/tlog/log_prover.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/tlog/tiles.h"

namespace verity::tlog {
namespace {

absl::Status TilesDiffer(const absl::Status& status) {
  return absl::DataLossError(absl::StrCat(
      "the log's tiles do not match its checkpoint: ", status.message()));
}

}  // namespace

LogProver::LogProver(std::shared_ptr<const LogStorage> storage,
                     uint64_t tile_cache_bytes)
    : storage_(std::move(storage)),
      cache_(tile_cache_bytes == 0
                 ? nullptr
                 : std::make_shared<LruCache<CachedTile, PathOf>>(
                       LruCacheOptions{tile_cache_bytes})),
      proofs_(tile_cache_bytes == 0
                  ? nullptr
                  : std::make_shared<LruCache<CachedProof, SizesOf>>(
                        LruCacheOptions{tile_cache_bytes / 64})) {}

TileHashReader LogProver::Tiles(uint64_t size, bool* missed) const {
  return TileHashReader(
      size,
      [storage = storage_, cache = cache_, missed](
          const TileId& id) -> absl::StatusOr<std::shared_ptr<const TileTree>> {
        const std::string path = id.Path();
        if (missed != nullptr) {
          std::shared_ptr<CachedTile> tile =
              cache == nullptr ? nullptr : cache->Find(path);
          if (tile == nullptr) {
            *missed = true;
            return absl::UnavailableError(absl::StrCat(path, " not cached"));
          }
          return tile->tree;
        }
        const auto read = [&]() -> absl::StatusOr<std::shared_ptr<CachedTile>> {
          ASSIGN_OR_RETURN(const std::string bytes, storage->Read(path));
          ASSIGN_OR_RETURN(std::shared_ptr<const TileTree> tree,
                           ParseTileTree(bytes, id.width));
          return std::make_shared<CachedTile>(
              CachedTile{path, std::move(tree)});
        };
        ASSIGN_OR_RETURN(
            std::shared_ptr<CachedTile> tile,
            cache == nullptr ? read() : cache->FindOrCreate(path, read));
        return tile->tree;
      });
}

absl::StatusOr<std::vector<LogHash>> LogProver::Inclusion(
    uint64_t index, absl::string_view entry,
    const Checkpoint& checkpoint) const {
  TileHashReader reader = Tiles(checkpoint.size);
  return InclusionFrom(reader, index, entry, checkpoint);
}

absl::StatusOr<std::vector<LogHash>> LogProver::Consistency(
    uint64_t old_size, uint64_t new_size, const Checkpoint& checkpoint) const {
  TileHashReader reader = Tiles(checkpoint.size);
  return ConsistencyFrom(reader, old_size, new_size, checkpoint);
}

std::optional<absl::StatusOr<std::vector<LogHash>>> LogProver::TryInclusionNow(
    uint64_t index, absl::string_view entry,
    const Checkpoint& checkpoint) const {
  return FromCacheOnly(checkpoint.size, [&](TileHashReader& reader) {
    return InclusionFrom(reader, index, entry, checkpoint);
  });
}

std::optional<absl::StatusOr<std::vector<LogHash>>>
LogProver::TryConsistencyNow(uint64_t old_size, uint64_t new_size,
                             const Checkpoint& checkpoint) const {
  return FromCacheOnly(checkpoint.size, [&](TileHashReader& reader) {
    return ConsistencyFrom(reader, old_size, new_size, checkpoint);
  });
}

std::optional<absl::StatusOr<std::vector<LogHash>>> LogProver::FromCacheOnly(
    uint64_t size,
    absl::FunctionRef<absl::StatusOr<std::vector<LogHash>>(TileHashReader&)>
        prove) const {
  if (cache_ == nullptr) return std::nullopt;
  bool missed = false;
  TileHashReader reader = Tiles(size, &missed);
  absl::StatusOr<std::vector<LogHash>> proof = prove(reader);
  if (missed) return std::nullopt;
  return proof;
}

absl::Status LogProver::Warm(const Checkpoint& checkpoint) const {
  TileHashReader reader = Tiles(checkpoint.size);
  ASSIGN_OR_RETURN(const LogHash root, TreeHash(checkpoint.size, reader));
  if (root != checkpoint.root) {
    return TilesDiffer(absl::DataLossError("another root"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<LogHash>> LogProver::InclusionFrom(
    TileHashReader& reader, uint64_t index, absl::string_view entry,
    const Checkpoint& checkpoint) const {
  ASSIGN_OR_RETURN(std::vector<LogHash> proof,
                   InclusionProof(index, checkpoint.size, reader));
  if (absl::Status ok = VerifyInclusion(index, checkpoint.size, LeafHash(entry),
                                        proof, checkpoint.root);
      !ok.ok()) {
    return TilesDiffer(ok);
  }
  return proof;
}

absl::StatusOr<std::vector<LogHash>> LogProver::ConsistencyFrom(
    TileHashReader& reader, uint64_t old_size, uint64_t new_size,
    const Checkpoint& checkpoint) const {
  if (new_size > checkpoint.size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the log has ", checkpoint.size, " entries, not ", new_size));
  }
  // One log: a proof between two sizes, once checked, stays the proof.
  const std::pair<uint64_t, uint64_t> sizes(old_size, new_size);
  if (proofs_ != nullptr) {
    if (std::shared_ptr<CachedProof> kept = proofs_->Find(sizes)) {
      return kept->hashes;
    }
  }
  // Every subtree of the smaller trees is one of the checkpoint's: its
  // tiles serve them all.
  ASSIGN_OR_RETURN(std::vector<LogHash> proof,
                   ConsistencyProof(old_size, new_size, reader));
  // The proof is checked as a client would, with roots from the same tiles
  // (the newest one the checkpoint's, which catches tiles that are not it).
  ASSIGN_OR_RETURN(const LogHash root, TreeHash(checkpoint.size, reader));
  if (root != checkpoint.root) {
    return TilesDiffer(absl::DataLossError("another root"));
  }
  ASSIGN_OR_RETURN(const LogHash old_root, TreeHash(old_size, reader));
  LogHash new_root = root;
  if (new_size != checkpoint.size) {
    ASSIGN_OR_RETURN(new_root, TreeHash(new_size, reader));
  }
  if (absl::Status ok =
          VerifyConsistency(old_size, new_size, old_root, new_root, proof);
      !ok.ok()) {
    return TilesDiffer(ok);
  }
  if (proofs_ != nullptr) {
    proofs_->Insert(std::make_shared<CachedProof>(CachedProof{sizes, proof}));
  }
  return proof;
}

}  // namespace verity::tlog
