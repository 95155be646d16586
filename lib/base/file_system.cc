// Implements PosixFileSystem with file_util.h's system calls, and the helpers
// that are the same over any FileSystem.

#include "lib/base/file_system.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/base/status_macros.h"

namespace verity {
namespace {

class Posix final : public FileSystem {
 public:
  absl::StatusOr<UniqueFd> OpenAt(int dir_fd, const std::string& path,
                                  int flags, mode_t mode) override {
    return ::verity::OpenAt(dir_fd, path, flags, mode);
  }

  absl::StatusOr<size_t> Write(int fd, absl::Span<const uint8_t> data,
                               absl::string_view path) override {
    ssize_t n;
    do {
      n = write(fd, data.data(), data.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) return ErrnoStatus(errno, "write", path);
    return static_cast<size_t>(n);
  }

  absl::StatusOr<size_t> Pwrite(int fd, uint64_t offset,
                                absl::Span<const uint8_t> data,
                                absl::string_view path) override {
    ssize_t n;
    do {
      n = pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    } while (n < 0 && errno == EINTR);
    if (n < 0) return ErrnoStatus(errno, "write", path);
    return static_cast<size_t>(n);
  }

  absl::StatusOr<size_t> Pread(int fd, uint64_t offset, absl::Span<uint8_t> out,
                               absl::string_view path) override {
    ssize_t n;
    do {
      n = pread(fd, out.data(), out.size(), static_cast<off_t>(offset));
    } while (n < 0 && errno == EINTR);
    if (n < 0) return ErrnoStatus(errno, "read", path);
    return static_cast<size_t>(n);
  }

  absl::Status Fsync(int fd, absl::string_view path) override {
    return ::verity::Fsync(fd, path);
  }

  absl::Status SyncFs(int fd, absl::string_view path) override {
    if (syncfs(fd) != 0) return ErrnoStatus(errno, "syncfs", path);
    return absl::OkStatus();
  }

  void StartWriteback(int fd, uint64_t offset, uint64_t length) override {
    ::verity::StartWriteback(fd, offset, length);
  }

  absl::Status Rename(const std::string& from, const std::string& to) override {
    return ::verity::Rename(from, to);
  }

  absl::Status Unlink(const std::string& path) override {
    if (unlink(path.c_str()) != 0) return ErrnoStatus(errno, "unlink", path);
    return absl::OkStatus();
  }

  absl::StatusOr<bool> MakeDir(const std::string& path) override {
    return ::verity::MakeDir(path);
  }

  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& path) override {
    return ::verity::ListDir(path);
  }

  absl::Status RemoveRecursively(const std::string& path) override {
    return ::verity::RemoveRecursively(path);
  }
};

}  // namespace

absl::StatusOr<absl::Time> FileSystem::ModifiedTime(int fd,
                                                    absl::string_view path) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoStatus(errno, "fstat", path);
  return absl::TimeFromTimespec(st.st_mtim);
}

absl::Status FileSystem::SetModifiedTime(int fd, absl::Time time,
                                         absl::string_view path) {
  const struct timespec times[2] = {{0, UTIME_OMIT}, absl::ToTimespec(time)};
  if (futimens(fd, times) != 0) return ErrnoStatus(errno, "futimens", path);
  return absl::OkStatus();
}

FileSystem& PosixFileSystem() {
  static Posix* const posix = new Posix();
  return *posix;
}

absl::StatusOr<UniqueFd> OpenFile(FileSystem& fs, const std::string& path,
                                  int flags, mode_t mode) {
  return fs.OpenAt(AT_FDCWD, path, flags, mode);
}

absl::Status WriteAll(FileSystem& fs, int fd, absl::Span<const uint8_t> data,
                      absl::string_view path) {
  while (!data.empty()) {
    ASSIGN_OR_RETURN(const size_t n, fs.Write(fd, data, path));
    data.remove_prefix(n);
  }
  return absl::OkStatus();
}

absl::Status PwriteAll(FileSystem& fs, int fd, uint64_t offset,
                       absl::Span<const uint8_t> data, absl::string_view path) {
  while (!data.empty()) {
    ASSIGN_OR_RETURN(const size_t n, fs.Pwrite(fd, offset, data, path));
    offset += n;
    data.remove_prefix(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> PreadUpTo(FileSystem& fs, int fd, uint64_t offset,
                                 absl::Span<uint8_t> out,
                                 absl::string_view path) {
  size_t done = 0;
  while (done < out.size()) {
    ASSIGN_OR_RETURN(const size_t n,
                     fs.Pread(fd, offset + done, out.subspan(done), path));
    if (n == 0) break;
    done += n;
  }
  return done;
}

absl::Status FsyncDir(FileSystem& fs, const std::string& path) {
  ASSIGN_OR_RETURN(const UniqueFd fd,
                   OpenFile(fs, path, O_RDONLY | O_DIRECTORY));
  return fs.Fsync(fd.get(), path);
}

namespace {

absl::Status WriteNewFile(FileSystem& fs, const std::string& path,
                          absl::string_view contents, bool durable) {
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenFile(fs, path, O_WRONLY | O_CREAT | O_EXCL));
  RETURN_IF_ERROR(WriteAll(fs, fd.get(), AsBytes(contents), path));
  if (durable) RETURN_IF_ERROR(fs.Fsync(fd.get(), path));
  return fd.Close(path);
}

}  // namespace

absl::Status WriteNewFile(FileSystem& fs, const std::string& path,
                          absl::string_view contents) {
  return WriteNewFile(fs, path, contents, /*durable=*/false);
}

absl::Status WriteNewFileDurably(FileSystem& fs, const std::string& path,
                                 absl::string_view contents) {
  return WriteNewFile(fs, path, contents, /*durable=*/true);
}

absl::Status ReplaceFileDurably(FileSystem& fs, const std::string& temp_path,
                                const std::string& path,
                                absl::string_view contents) {
  const absl::Status removed = fs.Unlink(temp_path);
  if (!removed.ok() && !absl::IsNotFound(removed)) return removed;
  RETURN_IF_ERROR(WriteNewFileDurably(fs, temp_path, contents));
  RETURN_IF_ERROR(fs.Rename(temp_path, path));
  return FsyncDir(fs, DirName(path));
}

namespace {

// The whole of the open file `fd`, at most `max_size` bytes. The buffer starts
// at the size expected and grows with the file rather than starting at
// `max_size`: a generous limit must not cost every small read the zeroing of
// a large buffer.
absl::StatusOr<std::string> ReadOpenFile(FileSystem& fs, int fd,
                                         const std::string& path,
                                         size_t max_size,
                                         size_t expected_size = 64 << 10) {
  // One byte more than allowed tells a file that is too large; one more than
  // expected, one that grew.
  const size_t limit = max_size + 1;
  std::string contents;
  size_t size = 0;
  for (size_t capacity = std::min<size_t>(limit, expected_size + 1);;
       capacity = std::min(limit, capacity * 2)) {
    contents.resize(capacity);
    ASSIGN_OR_RETURN(
        const size_t read,
        PreadUpTo(fs, fd, size,
                  AsMutableBytes(&contents).subspan(size, capacity - size),
                  path));
    size += read;
    if (size < capacity || capacity == limit) break;  // the end, or the limit
  }
  if (size > max_size) {
    return absl::OutOfRangeError(
        absl::StrCat(path, " is larger than ", max_size, " bytes"));
  }
  contents.resize(size);
  return contents;
}

}  // namespace

absl::StatusOr<std::string> ReadSmallFile(FileSystem& fs,
                                          const std::string& path,
                                          size_t max_size) {
  ASSIGN_OR_RETURN(const UniqueFd fd, OpenFile(fs, path, O_RDONLY));
  return ReadOpenFile(fs, fd.get(), path, max_size);
}

absl::StatusOr<std::string> ReadSmallRegularFile(FileSystem& fs,
                                                 const std::string& path,
                                                 size_t max_size) {
  // O_NONBLOCK: open(2) of a FIFO would wait for a writer; fstat then refuses
  // it. Reads of a regular file ignore the flag. A symlink is ELOOP, which is
  // FAILED_PRECONDITION too.
  ASSIGN_OR_RETURN(const UniqueFd fd,
                   OpenFile(fs, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
  return ReadRegularFd(fs, fd.get(), path, max_size);
}

absl::StatusOr<std::string> ReadRegularFd(FileSystem& fs, int fd,
                                          const std::string& path,
                                          size_t max_size) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoStatus(errno, "fstat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a regular file"));
  }
  // A buffer of the file's size, not a large one zeroed for a small read.
  return ReadOpenFile(fs, fd, path, max_size, static_cast<size_t>(st.st_size));
}

absl::Status MakeDirs(FileSystem& fs, const std::string& path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    RETURN_IF_ERROR(fs.MakeDir(path.substr(0, slash)).status());
  }
  return fs.MakeDir(path).status();
}

}  // namespace verity
