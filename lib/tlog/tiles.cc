// Implements tile paths, entry bundles and the tile-backed HashReader.

#include "lib/tlog/tiles.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/status_macros.h"

namespace verity::tlog {
namespace {

constexpr size_t kMaxEntrySize = 0xffff;

// How many positions level `level` has in the tree of `size` entries.
uint64_t LevelWidth(int level, uint64_t size) {
  if (level == TileId::kEntries) return size;
  const int shift = kTileHeight * level;
  return shift >= 64 ? 0 : size >> shift;
}

}  // namespace

std::string TileId::Path() const {
  std::string path =
      level == kEntries ? "tile/entries" : absl::StrCat("tile/", level);
  std::vector<uint64_t> groups;  // three-digit groups, last first
  uint64_t n = index;
  do {
    groups.push_back(n % 1000);
    n /= 1000;
  } while (n != 0);
  for (size_t i = groups.size(); i-- > 0;) {
    absl::StrAppendFormat(&path, "/%s%03d", i == 0 ? "" : "x", groups[i]);
  }
  if (width < kTileWidth) absl::StrAppend(&path, ".p/", width);
  return path;
}

absl::StatusOr<TileId> TileFor(int level, uint64_t index, uint64_t size) {
  const uint64_t positions = LevelWidth(level, size);
  if (index >= positions) {
    return absl::NotFoundError(absl::StrCat("the tree of ", size,
                                            " entries has no position ", index,
                                            " at tile level ", level));
  }
  TileId id;
  id.level = level;
  id.index = index / kTileWidth;
  id.width = static_cast<int>(
      std::min<uint64_t>(kTileWidth, positions - id.index * kTileWidth));
  return id;
}

std::vector<TileId> PartialTiles(uint64_t size) {
  std::vector<TileId> tiles;
  for (int level = TileId::kEntries; LevelWidth(level, size) != 0; ++level) {
    const uint64_t positions = LevelWidth(level, size);
    if (positions % kTileWidth != 0) {
      tiles.push_back({level, positions / kTileWidth,
                       static_cast<int>(positions % kTileWidth)});
    }
  }
  return tiles;
}

absl::Status AppendToBundle(absl::string_view entry, std::string& bundle) {
  if (entry.size() > kMaxEntrySize) {
    return absl::InvalidArgumentError(
        absl::StrCat("a log entry is at most ", kMaxEntrySize, " bytes, not ",
                     entry.size()));
  }
  bundle.push_back(static_cast<char>(entry.size() >> 8));
  bundle.push_back(static_cast<char>(entry.size() & 0xff));
  bundle.append(entry.data(), entry.size());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> SplitBundle(absl::string_view bundle) {
  std::vector<std::string> entries;
  while (!bundle.empty()) {
    if (bundle.size() < 2) break;
    const size_t length = (static_cast<uint8_t>(bundle[0]) << 8) |
                          static_cast<uint8_t>(bundle[1]);
    if (bundle.size() - 2 < length) break;
    entries.emplace_back(bundle.substr(2, length));
    bundle.remove_prefix(2 + length);
  }
  if (!bundle.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("an entry bundle ends within an entry, after ",
                     entries.size(), " entries"));
  }
  return entries;
}

absl::StatusOr<std::vector<LogHash>> SplitTile(absl::string_view bytes,
                                               int width) {
  if (bytes.size() != static_cast<size_t>(width) * kLogHashSize) {
    return absl::DataLossError(absl::StrCat("a tile of ", width, " hashes has ",
                                            bytes.size(), " bytes"));
  }
  std::vector<LogHash> hashes(width);
  for (int i = 0; i < width; ++i) {
    std::memcpy(hashes[i].data(), bytes.data() + i * kLogHashSize,
                kLogHashSize);
  }
  return hashes;
}

std::string JoinTile(const std::vector<LogHash>& hashes) {
  std::string bytes;
  bytes.reserve(hashes.size() * kLogHashSize);
  for (const LogHash& hash : hashes) {
    bytes.append(reinterpret_cast<const char*>(hash.data()), hash.size());
  }
  return bytes;
}

LogHash CompleteTreeHash(absl::Span<const LogHash> hashes) {
  if (hashes.size() == 1) return hashes[0];
  const size_t half = hashes.size() / 2;
  return NodeHash(CompleteTreeHash(hashes.subspan(0, half)),
                  CompleteTreeHash(hashes.subspan(half)));
}

TileTree::TileTree(std::vector<LogHash> hashes) {
  levels_.push_back(std::move(hashes));
  while (levels_.back().size() >= 2) {
    const std::vector<LogHash>& below = levels_.back();
    std::vector<LogHash> level(below.size() / 2);
    for (size_t i = 0; i < level.size(); ++i) {
      level[i] = NodeHash(below[2 * i], below[2 * i + 1]);
    }
    levels_.push_back(std::move(level));
  }
}

uint64_t TileTree::cached_bytes() const {
  uint64_t hashes = 0;
  for (const std::vector<LogHash>& level : levels_) hashes += level.size();
  return hashes * kLogHashSize;
}

absl::StatusOr<std::shared_ptr<const TileTree>> ParseTileTree(
    absl::string_view bytes, int width) {
  ASSIGN_OR_RETURN(std::vector<LogHash> hashes, SplitTile(bytes, width));
  return std::make_shared<const TileTree>(std::move(hashes));
}

TileHashReader::TileHashReader(uint64_t size, TileSource source)
    : size_(size),
      source_([source = std::move(source)](const TileId& id)
                  -> absl::StatusOr<std::shared_ptr<const TileTree>> {
        ASSIGN_OR_RETURN(const std::string bytes, source(id));
        return ParseTileTree(bytes, id.width);
      }) {}

absl::StatusOr<LogHash> TileHashReader::Read(SubtreeIndex subtree) {
  const int level = subtree.level / kTileHeight;
  const int rest = subtree.level % kTileHeight;
  if (subtree.level >= 64 || subtree.index >= (size_ >> subtree.level)) {
    return absl::NotFoundError(
        absl::StrCat("the tree of ", size_, " entries has no complete subtree ",
                     subtree.index, " at level ", subtree.level));
  }
  // The 2^rest hashes of tile level `level` under the subtree: one tile
  // holds them all.
  const uint64_t first = subtree.index << rest;
  ASSIGN_OR_RETURN(TileId id, TileFor(level, first, size_));
  ASSIGN_OR_RETURN(const TileTree* tile, Tile(id));
  const size_t offset = first % kTileWidth;
  if (tile->width() != static_cast<size_t>(id.width) ||
      offset + (size_t{1} << rest) > tile->width()) {
    return absl::DataLossError(
        absl::StrCat("tile ", id.Path(), " has ", tile->width(), " hashes"));
  }
  return tile->Subtree(rest, offset);
}

absl::StatusOr<const TileTree*> TileHashReader::Tile(const TileId& id) {
  auto it = tiles_.find({id.level, id.index});
  if (it == tiles_.end()) {
    ASSIGN_OR_RETURN(std::shared_ptr<const TileTree> tree, source_(id));
    it = tiles_.emplace(std::make_pair(id.level, id.index), std::move(tree))
             .first;
  }
  return it->second.get();
}

}  // namespace verity::tlog
