// Implements the file helpers with plain POSIX calls, retrying EINTR.

#include "lib/base/file_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "lib/base/dir_walk.h"
#include "lib/base/file_system.h"
#include "lib/base/status_macros.h"

namespace verity {

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::StatusOr<std::vector<std::string>> ListDirFd(int dir_fd,
                                                   absl::string_view path) {
  // fdopendir owns the descriptor it is given, so hand it a duplicate.
  const int dup_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return ErrnoStatus(errno, "dup", path);
  DIR* dir = fdopendir(dup_fd);
  if (dir == nullptr) {
    const int error = errno;
    close(dup_fd);
    return ErrnoStatus(error, "opendir", path);
  }
  const auto closer = absl::MakeCleanup([dir] { closedir(dir); });
  // The duplicate shares the descriptor's offset: a listing before this one
  // left it at the end.
  rewinddir(dir);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = readdir(dir)) {
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
    errno = 0;
  }
  if (errno != 0) return ErrnoStatus(errno, "readdir", path);
  std::sort(names.begin(), names.end());
  return names;
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

int UniqueFd::Release() { return std::exchange(fd_, -1); }

absl::Status UniqueFd::Close(absl::string_view path) {
  if (fd_ < 0) return absl::OkStatus();
  // Linux releases the descriptor even when close() fails: never retry.
  if (close(Release()) != 0 && errno != EINTR) {
    return ErrnoStatus(errno, "close", path);
  }
  return absl::OkStatus();
}

absl::Status ErrnoStatus(int error, absl::string_view op,
                         absl::string_view path) {
  const std::string message =
      absl::StrCat(op, " ", path, ": ", strerror(error));
  switch (error) {
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(message);
    case ENOENT:
      return absl::NotFoundError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

std::string JoinPath(absl::string_view dir, absl::string_view name) {
  if (dir.empty() || dir.back() == '/') return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

absl::StatusOr<UniqueFd> OpenAt(int dir_fd, const std::string& path, int flags,
                                mode_t mode) {
  int fd;
  do {
    fd = openat(dir_fd, path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoStatus(errno, "open", path);
  return UniqueFd(fd);
}

absl::StatusOr<UniqueFd> OpenFile(const std::string& path, int flags,
                                  mode_t mode) {
  return OpenAt(AT_FDCWD, path, flags, mode);
}

absl::Status WriteAll(int fd, absl::Span<const uint8_t> data,
                      absl::string_view path) {
  return WriteAll(PosixFileSystem(), fd, data, path);
}

namespace {

// What O_DIRECT asks of memory, offsets and lengths here (the page; a device
// asking more makes the O_DIRECT part fail, and the page cache serves it).
constexpr size_t kPageBytes = 4096;

bool SetDirect(int fd, bool direct) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 &&
         fcntl(fd, F_SETFL, direct ? flags | O_DIRECT : flags & ~O_DIRECT) == 0;
}

bool Aligned(const void* memory, uint64_t offset) {
  return reinterpret_cast<uintptr_t>(memory) % kPageBytes == 0 &&
         offset % kPageBytes == 0;
}

// Moves the whole pages of `size` bytes at file `offset` with O_DIRECT, by
// `io(done, count)` (a pread or pwrite of `count` bytes `done` bytes in):
// none unless `memory` and `offset` are page-aligned and the file system
// takes it; up to a short transfer (the end of a file) or a failure, which
// the page cache then meets again and reports. Returns the bytes moved, with
// O_DIRECT cleared again.
template <typename Io>
absl::StatusOr<size_t> DirectPart(int fd, const void* memory, uint64_t offset,
                                  size_t size, absl::string_view path, Io io) {
  const size_t direct = size - size % kPageBytes;
  if (direct == 0 || !Aligned(memory, offset) || !SetDirect(fd, true)) {
    return 0;
  }
  size_t done = 0;
  while (done < direct) {
    const ssize_t n = io(done, direct - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
    if (done % kPageBytes != 0) break;
  }
  if (!SetDirect(fd, false)) return ErrnoStatus(errno, "fcntl", path);
  return done;
}

}  // namespace

absl::Status WriteNewFileDirect(int fd, absl::Span<const uint8_t> data,
                                absl::string_view path) {
  ASSIGN_OR_RETURN(const size_t direct,
                   DirectPart(fd, data.data(), 0, data.size(), path,
                              [&](size_t done, size_t count) {
                                return pwrite(fd, data.data() + done, count,
                                              static_cast<off_t>(done));
                              }));
  if (direct > 0 && lseek(fd, static_cast<off_t>(direct), SEEK_SET) < 0) {
    return ErrnoStatus(errno, "lseek", path);
  }
  return WriteAll(fd, data.subspan(direct), path);
}

absl::StatusOr<size_t> PreadUpTo(int fd, uint64_t offset,
                                 absl::Span<uint8_t> out,
                                 absl::string_view path) {
  return PreadUpTo(PosixFileSystem(), fd, offset, out, path);
}

absl::StatusOr<size_t> PreadUpToDirect(int fd, uint64_t offset,
                                       absl::Span<uint8_t> out,
                                       absl::string_view path) {
  ASSIGN_OR_RETURN(const size_t direct,
                   DirectPart(fd, out.data(), offset, out.size(), path,
                              [&](size_t done, size_t count) {
                                return pread(fd, out.data() + done, count,
                                             static_cast<off_t>(offset + done));
                              }));
  ASSIGN_OR_RETURN(const size_t rest,
                   PreadUpTo(fd, offset + direct, out.subspan(direct), path));
  return direct + rest;
}

absl::Status Fsync(int fd, absl::string_view path) {
  if (fsync(fd) != 0) return ErrnoStatus(errno, "fsync", path);
  return absl::OkStatus();
}

void StartWriteback(int fd, uint64_t offset, uint64_t length) {
  // Errors surface again, and decide, at the fsync.
  sync_file_range(fd, static_cast<off64_t>(offset),
                  static_cast<off64_t>(length), SYNC_FILE_RANGE_WRITE);
}

absl::Status FsyncDir(const std::string& path) {
  return FsyncDir(PosixFileSystem(), path);
}

absl::Status WriteNewFileDurably(const std::string& path,
                                 absl::string_view contents) {
  return WriteNewFileDurably(PosixFileSystem(), path, contents);
}

absl::Status ReplaceFileDurably(const std::string& temp_path,
                                const std::string& path,
                                absl::string_view contents) {
  return ReplaceFileDurably(PosixFileSystem(), temp_path, path, contents);
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          size_t max_size) {
  return ReadSmallFile(PosixFileSystem(), path, max_size);
}

absl::StatusOr<std::string> ReadSmallRegularFile(const std::string& path,
                                                 size_t max_size) {
  return ReadSmallRegularFile(PosixFileSystem(), path, max_size);
}

absl::StatusOr<bool> MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) == 0) return true;
  if (errno != EEXIST) return ErrnoStatus(errno, "mkdir", path);
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return false;
  return absl::FailedPreconditionError(
      absl::StrCat(path, " exists and is not a directory"));
}

absl::Status MakeDirs(const std::string& path) {
  return MakeDirs(PosixFileSystem(), path);
}

absl::Status CheckOwnDirectory(const struct stat& st, absl::string_view path) {
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a directory"));
  }
  if (st.st_uid != geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is owned by uid ", st.st_uid, ", not this user's (", geteuid(),
        "): give a directory of its own"));
  }
  if ((st.st_mode & 022) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is writable by group or others (mode 0",
                     absl::Hex(st.st_mode & 07777),
                     "): anyone who can write it could plant ",
                     "what is kept there; chmod go-w it"));
  }
  return absl::OkStatus();
}

absl::Status CheckOwnDirectory(const std::string& path, bool absent_ok) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT && absent_ok) return absl::OkStatus();
    return ErrnoStatus(errno, "stat", path);
  }
  return CheckOwnDirectory(st, path);
}

absl::StatusOr<UniqueFd> OpenLockFile(const std::string& path) {
  absl::StatusOr<UniqueFd> fd =
      OpenFile(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (absl::IsFailedPrecondition(fd.status())) {  // ELOOP: a symlink
    return absl::FailedPreconditionError(absl::StrCat(
        "the lock file ", path, " is not a file (a symlink?): remove it"));
  }
  return fd;
}

absl::Status Rename(const std::string& from, const std::string& to) {
  if (rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoStatus(errno, "rename", absl::StrCat(from, " to ", to));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path) {
  ASSIGN_OR_RETURN(const UniqueFd fd, OpenFile(path, O_RDONLY | O_DIRECTORY));
  return ListDirFd(fd.get(), path);
}

absl::Status RemoveRecursively(const std::string& path) {
  return RemoveBeneath(AT_FDCWD, path, path);
}

absl::Span<uint8_t> PageAlignedBuffer(size_t size,
                                      std::vector<uint8_t>* storage) {
  storage->resize(size + kPageBytes);
  const uintptr_t address = reinterpret_cast<uintptr_t>(storage->data());
  const size_t skip = (kPageBytes - address % kPageBytes) % kPageBytes;
  return absl::MakeSpan(storage->data() + skip, size);
}

}  // namespace verity
