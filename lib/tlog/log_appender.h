// Appends entries to a tiled log: keeps the right edge of the tree (each
// level's last, partial tile, and the partial entry bundle) and says which
// tiles an append made or changed, so that a sequencer writes exactly those
// and then a checkpoint of the new size and root.
//
// Not thread-safe: one sequencer appends at a time.

#ifndef VERITYD_LIB_TLOG_LOG_APPENDER_H_
#define VERITYD_LIB_TLOG_LOG_APPENDER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/tlog/merkle_log.h"
#include "lib/tlog/tiles.h"

namespace verity::tlog {

struct TileBytes {
  TileId id;
  std::string bytes;
};

class LogAppender {
 public:
  // The edge of the empty log.
  LogAppender() = default;
  // The edge of the tree of `size` entries, from its partial tiles (which
  // are checked against each other: each level's partial tile must hash,
  // with the levels above, to `root`). DATA_LOSS if they do not.
  static absl::StatusOr<LogAppender> Resume(uint64_t size, const LogHash& root,
                                            const TileSource& tiles);

  // Appends `entries`; returns every tile they made or changed (full tiles
  // and the new partial ones, entry bundles included), to be written before
  // a checkpoint of size() and Root(). INVALID_ARGUMENT (and nothing
  // appended) for an entry a bundle cannot hold.
  absl::StatusOr<std::vector<TileBytes>> Append(
      absl::Span<const std::string> entries);

  uint64_t size() const { return size_; }
  // The tree hash of size() entries.
  LogHash Root() const;

 private:
  // Adds `hash` at tile level `level`, cascading a filled tile upwards.
  void Push(int level, const LogHash& hash, std::vector<TileBytes>& full);

  uint64_t size_ = 0;
  std::string bundle_;  // the partial entry bundle
  // edge_[L]: the hashes of tile level L's partial tile.
  std::vector<std::vector<LogHash>> edge_;
};

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_LOG_APPENDER_H_
