// Implements LogAppender.

#include "lib/tlog/log_appender.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace verity::tlog {
namespace {

constexpr size_t kMaxEntrySize = 0xffff;

bool Contains(const std::vector<TileId>& tiles, const TileId& id) {
  return std::find(tiles.begin(), tiles.end(), id) != tiles.end();
}

}  // namespace

absl::StatusOr<LogAppender> LogAppender::Resume(uint64_t size,
                                                const LogHash& root,
                                                const TileSource& tiles) {
  LogAppender appender;
  appender.size_ = size;
  for (const TileId& id : PartialTiles(size)) {
    ASSIGN_OR_RETURN(std::string bytes, tiles(id));
    if (id.level == TileId::kEntries) {
      ASSIGN_OR_RETURN(std::vector<std::string> entries, SplitBundle(bytes));
      if (entries.size() != static_cast<size_t>(id.width)) {
        return absl::DataLossError(
            absl::StrCat(id.Path(), " holds ", entries.size(), " entries"));
      }
      appender.bundle_ = std::move(bytes);
      continue;
    }
    if (appender.edge_.size() <= static_cast<size_t>(id.level)) {
      appender.edge_.resize(id.level + 1);
    }
    ASSIGN_OR_RETURN(appender.edge_[id.level], SplitTile(bytes, id.width));
  }
  // The bundle's entries are the level-0 tile's leaves.
  ASSIGN_OR_RETURN(std::vector<std::string> entries,
                   SplitBundle(appender.bundle_));
  const std::vector<LogHash> no_leaves;
  const std::vector<LogHash>& leaves =
      appender.edge_.empty() ? no_leaves : appender.edge_[0];
  bool leaves_match = leaves.size() == entries.size();
  for (size_t i = 0; leaves_match && i < entries.size(); ++i) {
    leaves_match = LeafHash(entries[i]) == leaves[i];
  }
  if (!leaves_match || appender.Root() != root) {
    return absl::DataLossError(
        absl::StrCat("the partial tiles of the log of ", size,
                     " entries do not hash to its checkpoint's root"));
  }
  return appender;
}

absl::StatusOr<std::vector<TileBytes>> LogAppender::Append(
    absl::Span<const std::string> entries) {
  for (const std::string& entry : entries) {
    if (entry.size() > kMaxEntrySize) {
      return absl::InvalidArgumentError(
          absl::StrCat("a log entry is at most ", kMaxEntrySize, " bytes, not ",
                       entry.size()));
    }
  }
  const std::vector<TileId> old_partial = PartialTiles(size_);
  std::vector<TileBytes> written;
  for (const std::string& entry : entries) {
    RETURN_IF_ERROR(AppendToBundle(entry, bundle_));
    ++size_;
    if (size_ % kTileWidth == 0) {
      written.push_back({{TileId::kEntries, size_ / kTileWidth - 1}, ""});
      written.back().bytes.swap(bundle_);
    }
    Push(0, LeafHash(entry), written);
  }
  for (const TileId& id : PartialTiles(size_)) {
    if (Contains(old_partial, id)) continue;
    written.push_back({id, id.level == TileId::kEntries
                               ? bundle_
                               : JoinTile(edge_[id.level])});
  }
  return written;
}

void LogAppender::Push(int level, const LogHash& hash,
                       std::vector<TileBytes>& full) {
  if (edge_.size() <= static_cast<size_t>(level)) edge_.resize(level + 1);
  std::vector<LogHash>& tile = edge_[level];
  tile.push_back(hash);
  if (tile.size() < kTileWidth) return;
  // Position (size_ >> 8·level) - 1 of this level filled its tile.
  const uint64_t index = (size_ >> (kTileHeight * level)) / kTileWidth - 1;
  full.push_back({{level, index}, JoinTile(tile)});
  const LogHash up = CompleteTreeHash(tile);
  tile.clear();
  Push(level + 1, up, full);
}

LogHash LogAppender::Root() const {
  // The root's complete subtrees all lie in the partial tiles.
  TileHashReader reader(
      size_, [this](const TileId& id) -> absl::StatusOr<std::string> {
        if (id.level < 0 || static_cast<size_t>(id.level) >= edge_.size() ||
            edge_[id.level].size() != static_cast<size_t>(id.width)) {
          return absl::InternalError(
              absl::StrCat("the log's edge has no ", id.Path()));
        }
        return JoinTile(edge_[id.level]);
      });
  absl::StatusOr<LogHash> root = TreeHash(size_, reader);
  // Unreachable: a size's root needs no tile but its partial ones.
  return root.ok() ? *root : LogHash{};
}

}  // namespace verity::tlog
