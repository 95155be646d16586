// Implements AtomicFileWriter with mkstemp, fsync and rename(2), which
// replaces the target atomically within one file system.

#include "client/sdk/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"

namespace verity::client {
namespace {

// umask() can only be read by setting it; the CLI is the only thread that
// creates files, so the brief change is not observed.
mode_t CurrentUmask() {
  const mode_t mask = umask(0);
  umask(mask);
  return mask;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(
    absl::string_view path) {
  std::string target(path);
  if (target.empty() || target.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", target, "' is not a file name"));
  }
  // A device, FIFO or socket would be replaced by the rename, not written:
  // `-o /dev/null` as root would delete /dev/null.
  struct stat st;
  if (stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", target, "' exists and is not a regular file"));
  }
  const size_t slash = target.rfind('/');
  std::string temp = absl::StrCat(
      DirName(target), "/.",
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
  return WriteAll(fd_, data, temp_path_);
}

absl::Status AtomicFileWriter::WriteAt(uint64_t offset,
                                       absl::Span<const uint8_t> data) {
  if (fd_ < 0 || committed_) {
    return absl::FailedPreconditionError("the file is closed");
  }
  while (!data.empty()) {
    const ssize_t n = pwrite(fd_, data.data(), data.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "write", temp_path_);
    data.remove_prefix(n);
    offset += n;
  }
  return absl::OkStatus();
}

absl::Status AtomicFileWriter::Commit() {
  if (fd_ < 0 || committed_) {
    return absl::FailedPreconditionError("the file is closed");
  }
  // The data must be on disk before the rename can make it visible, or a
  // crash could leave the target name on an empty or partial file.
  RETURN_IF_ERROR(Fsync(fd_, temp_path_));
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
  return FsyncDir(DirName(path_));
}

void AtomicFileWriter::Abandon() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  unlink(temp_path_.c_str());
}

}  // namespace verity::client
