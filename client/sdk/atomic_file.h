// Writes a file so that it appears complete or not at all: content goes to a
// temporary file beside it, which replaces the target only on Commit().

#ifndef VERITYD_CLIENT_SDK_ATOMIC_FILE_H_
#define VERITYD_CLIENT_SDK_ATOMIC_FILE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace verity::client {

// Owns the temporary file until Commit(); destroying it uncommitted removes
// the temporary, so the target is untouched: absent, or with its old content.
// The new file gets mode 0666 minus the umask, as open(O_CREAT) would give.
// Thread-compatible, except as WriteAt() says.
class AtomicFileWriter {
 public:
  // Creates the temporary file in the directory of `path`. FAILED_PRECONDITION
  // if `path` exists and is not a regular file (a device or FIFO cannot be
  // replaced atomically, and must not be replaced at all).
  static absl::StatusOr<std::unique_ptr<AtomicFileWriter>> Create(
      absl::string_view path);

  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  absl::Status Write(absl::Span<const uint8_t> data);

  // Writes `data` at `offset`, leaving the file position alone. Calls for
  // disjoint ranges may run concurrently (with each other, not with Write or
  // Commit), which is how parallel fetches fill the file.
  absl::Status WriteAt(uint64_t offset, absl::Span<const uint8_t> data);

  // Flushes the content to disk, renames the temporary over the target and
  // syncs the directory. Call at most once. A failure before the rename
  // leaves the target untouched; a failed directory sync after it is
  // reported, but the complete file stays.
  absl::Status Commit();

  const std::string& temp_path() const { return temp_path_; }

 private:
  AtomicFileWriter(std::string path, std::string temp_path, int fd)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}

  void Abandon();

  const std::string path_;
  const std::string temp_path_;
  int fd_;  // -1 once closed
  bool committed_ = false;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_ATOMIC_FILE_H_
