// The C2SP tlog-tiles layout of a log: tiles of 256 hashes at every eighth
// level of the tree, entry bundles, and their paths; and a HashReader that
// answers any complete subtree's hash from the tiles of a tree size.

#ifndef VERITYD_LIB_TLOG_TILES_H_
#define VERITYD_LIB_TLOG_TILES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tlog/merkle_log.h"

namespace verity::tlog {

inline constexpr int kTileHeight = 8;
inline constexpr int kTileWidth = 1 << kTileHeight;  // hashes or entries

// A tile: `level` -1 is the entry bundles; level L >= 0 holds the hashes of
// tree level 8L. `width` is 1..256; below 256 the tile is partial.
struct TileId {
  static constexpr int kEntries = -1;
  int level = 0;
  uint64_t index = 0;
  int width = kTileWidth;

  // "tile/<L>/<N>[.p/<W>]" or "tile/entries/<N>[.p/<W>]", N written in
  // three-digit groups all but the last prefixed with "x" (x001/x234/067).
  std::string Path() const;
  bool operator==(const TileId& other) const {
    return level == other.level && index == other.index && width == other.width;
  }
};

// The tile of `level` holding position `index` of that level (an entry for
// kEntries), as the tree of `size` entries has it: full, or the partial
// right-most one. NOT_FOUND if the tree has no such position.
absl::StatusOr<TileId> TileFor(int level, uint64_t index, uint64_t size);

// Every partial tile of the tree of `size` entries, entry bundle first: what
// a log writes for a checkpoint besides the full tiles.
std::vector<TileId> PartialTiles(uint64_t size);

// Entry bundles: each entry as a big-endian uint16 length and its bytes.
// INVALID_ARGUMENT for an entry of 64 KiB or more.
absl::Status AppendToBundle(absl::string_view entry, std::string& bundle);
// INVALID_ARGUMENT for a bundle that is not whole entries.
absl::StatusOr<std::vector<std::string>> SplitBundle(absl::string_view bundle);

// Reads a tile's bytes from wherever the log keeps them.
using TileSource = std::function<absl::StatusOr<std::string>(const TileId&)>;

// A tile's hashes and the hash of every complete subtree within it: what a
// proof reads of a tile, each computed once (a proof needs subtrees of up
// to 128 of a tile's hashes). Immutable.
class TileTree {
 public:
  explicit TileTree(std::vector<LogHash> hashes);
  // The hash of the 2^`rest` hashes from `offset`, a multiple of 2^rest,
  // all within the tile.
  const LogHash& Subtree(int rest, size_t offset) const {
    return levels_[rest][offset >> rest];
  }
  size_t width() const { return levels_[0].size(); }
  uint64_t cached_bytes() const;

 private:
  std::vector<std::vector<LogHash>> levels_;  // level r: width >> r hashes
};

// Reads a tile from wherever the log keeps it, as its TileTree (from a
// cache of them, say). DATA_LOSS for one of the wrong width.
using TileTreeSource =
    std::function<absl::StatusOr<std::shared_ptr<const TileTree>>(
        const TileId&)>;

// The TileTree of a tile's bytes; DATA_LOSS for the wrong length.
absl::StatusOr<std::shared_ptr<const TileTree>> ParseTileTree(
    absl::string_view bytes, int width);

// Every complete subtree hash of the tree of `size` entries, computed from
// the tiles `source` returns (each read once, then kept). DATA_LOSS for a
// tile of the wrong length. Not thread-safe.
class TileHashReader final : public HashReader {
 public:
  TileHashReader(uint64_t size, TileSource source);
  TileHashReader(uint64_t size, TileTreeSource source)
      : size_(size), source_(std::move(source)) {}
  absl::StatusOr<LogHash> Read(SubtreeIndex subtree) override;

 private:
  absl::StatusOr<const TileTree*> Tile(const TileId& id);

  const uint64_t size_;
  const TileTreeSource source_;
  std::map<std::pair<int, uint64_t>, std::shared_ptr<const TileTree>> tiles_;
};

// The hashes of a tile's bytes, and back.
absl::StatusOr<std::vector<LogHash>> SplitTile(absl::string_view bytes,
                                               int width);
std::string JoinTile(const std::vector<LogHash>& hashes);

// The hash of a complete subtree over `hashes` (a power of two of them).
LogHash CompleteTreeHash(absl::Span<const LogHash> hashes);

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_TILES_H_
