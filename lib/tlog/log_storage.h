// Where a tiled log keeps itself: objects by path (C2SP tlog-tiles' tiles,
// entry bundles and checkpoint, and staged batches) and one small
// state record replaced only by compare-and-set, the commit point of every
// append. The server's stores implement it, the file store and S3, which
// the log does not trust: what it reads back it checks against signed
// checkpoints.
//
// Implementations are thread-safe.

#ifndef VERITYD_LIB_TLOG_LOG_STORAGE_H_
#define VERITYD_LIB_TLOG_LOG_STORAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace verity::tlog {

// The object a log publishes its newest checkpoint as (C2SP tlog-tiles).
inline constexpr absl::string_view kCheckpointPath = "checkpoint";

// A page of a log's objects under a folder (LogStorage::List).
struct LogObjectPage {
  struct Object {
    std::string path;  // within the log, as Read() takes it
    uint64_t bytes = 0;
    // By the storage's clock; InfiniteFuture if it cannot tell (never old).
    absl::Time written = absl::InfiniteFuture();
  };
  std::vector<Object> objects;
  std::string next;  // empty: the last page; else the next call's `after`
};

class LogStorage {
 public:
  struct Record {
    std::string body;
    std::string version;  // opaque: what WriteState compares against
  };

  virtual ~LogStorage() = default;

  // NOT_FOUND if there is no object at `path`.
  virtual absl::StatusOr<std::string> Read(absl::string_view path) const = 0;
  // Writes or replaces the object at `path`, durably before it returns.
  virtual absl::Status Write(absl::string_view path,
                             absl::string_view bytes) = 0;
  // OK if there was none.
  virtual absl::Status Delete(absl::string_view path) = 0;
  // The objects under `folder` (a path ending in '/', as "batches/"), in
  // path order after `after` (empty: from the first), a page at a time.
  virtual absl::StatusOr<LogObjectPage> List(absl::string_view folder,
                                             absl::string_view after) const = 0;

  // nullopt before the first append.
  virtual absl::StatusOr<std::optional<Record>> ReadState() const = 0;
  // Replaces the state if it is still `expected` (nullopt: there is none),
  // durably; FAILED_PRECONDITION if another writer replaced it since.
  virtual absl::StatusOr<Record> WriteState(
      absl::string_view body, const std::optional<std::string>& expected) = 0;
};

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_LOG_STORAGE_H_
