// Implements AtomicFileWriter with mkstemp, fsync and rename(2), which
// replaces the target atomically within one file system.

#include "client/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"

namespace verity::client {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// umask() can only be read by setting it; the CLI is the only thread that
// creates files, so the brief change is not observed.
mode_t CurrentUmask() {
  const mode_t mask = umask(0);
  umask(mask);
  return mask;
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", dir));
  const int rc = fsync(fd);
  const int fsync_errno = errno;
  close(fd);
  if (rc != 0) {
    return absl::ErrnoToStatus(fsync_errno, absl::StrCat("fsync ", dir));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(
    absl::string_view path) {
  std::string target(path);
  if (target.empty() || target.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", target, "' is not a file name"));
  }
  const size_t slash = target.rfind('/');
  std::string temp = absl::StrCat(
      DirectoryOf(target), "/.",
      slash == std::string::npos ? target : target.substr(slash + 1),
      ".verity-XXXXXX");
  const int fd = mkostemp(&temp[0], O_CLOEXEC);
  if (fd < 0) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("can't create a file beside '", target, "'"));
  }
  std::unique_ptr<AtomicFileWriter> writer(
      new AtomicFileWriter(std::move(target), std::move(temp), fd));
  if (fchmod(fd, 0666 & ~CurrentUmask()) != 0) {
    return absl::ErrnoToStatus(errno,
                               absl::StrCat("chmod ", writer->temp_path_));
  }
  return writer;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed_) Abandon();
}

absl::Status AtomicFileWriter::Write(absl::Span<const uint8_t> data) {
  if (fd_ < 0 || committed_) {
    return absl::FailedPreconditionError("the file is closed");
  }
  while (!data.empty()) {
    const ssize_t n = write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("write ", temp_path_));
    }
    data.remove_prefix(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (fd_ < 0 || committed_) {
    return absl::FailedPreconditionError("the file is closed");
  }
  // The data must be on disk before the rename can make it visible, or a
  // crash could leave the target name on an empty or partial file.
  if (fsync(fd_) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("fsync ", temp_path_));
  }
  const int rc = close(fd_);
  fd_ = -1;
  if (rc != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("close ", temp_path_));
  }
  if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("rename ", temp_path_, " to ", path_));
  }
  committed_ = true;
  return SyncDirectory(DirectoryOf(path_));
}

void AtomicFileWriter::Abandon() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  unlink(temp_path_.c_str());
}

}  // namespace verity::client
