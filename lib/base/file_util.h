// POSIX file helpers for the store and the CLI: errno statuses, durable
// (fsync'd) writes, directory fsync, listing and recursive removal. The store
// makes the same calls through file_system.h, where tests can inject faults.

#ifndef VERITYD_LIB_BASE_FILE_UTIL_H_
#define VERITYD_LIB_BASE_FILE_UTIL_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace verity {

// Owns a file descriptor and closes it on destruction. Move-only;
// thread-compatible.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();
  // Closes now and reports the error the destructor would swallow; after
  // writes, close() can be the first to report a failure.
  absl::Status Close(absl::string_view path);

 private:
  int fd_ = -1;
};

// "<op> <path>: <strerror>" with a code callers can act on:
// RESOURCE_EXHAUSTED for a full disk or quota (ENOSPC, EDQUOT), NOT_FOUND
// for ENOENT, ALREADY_EXISTS for EEXIST, FAILED_PRECONDITION for a file of
// the wrong type (ENOTDIR, EISDIR, ELOOP from O_NOFOLLOW), INTERNAL for
// anything else.
absl::Status ErrnoStatus(int error, absl::string_view op,
                         absl::string_view path);

std::string JoinPath(absl::string_view dir, absl::string_view name);

// The directory part of `path`: "." for a bare name, "/" for "/name".
std::string DirName(const std::string& path);

// open(2) with O_CLOEXEC added; `dir_fd` may be AT_FDCWD.
absl::StatusOr<UniqueFd> OpenAt(int dir_fd, const std::string& path, int flags,
                                mode_t mode = 0644);
absl::StatusOr<UniqueFd> OpenFile(const std::string& path, int flags,
                                  mode_t mode = 0644);

absl::Status WriteAll(int fd, absl::Span<const uint8_t> data,
                      absl::string_view path);

// WriteAll into `fd`, a new (empty) file, past the page cache where it can:
// the whole pages of page-aligned `data` with O_DIRECT, when the file system
// takes them, the rest through the page cache. For a cache's files: the disk
// reads them from `data`, with no copy into the page cache and nothing pushed
// out of it. Leaves `fd` without O_DIRECT.
absl::Status WriteNewFileDirect(int fd, absl::Span<const uint8_t> data,
                                absl::string_view path);

// Reads out.size() bytes at `offset`, or fewer only at end of file; returns
// how many were read.
absl::StatusOr<size_t> PreadUpTo(int fd, uint64_t offset,
                                 absl::Span<uint8_t> out,
                                 absl::string_view path);
// PreadUpTo past the page cache where it can: whole pages into page-aligned
// `out` from a page-aligned `offset` with O_DIRECT, the rest through the page
// cache (WriteNewFileDirect's counterpart). Leaves `fd` without O_DIRECT.
absl::StatusOr<size_t> PreadUpToDirect(int fd, uint64_t offset,
                                       absl::Span<uint8_t> out,
                                       absl::string_view path);

absl::Status Fsync(int fd, absl::string_view path);

// Starts writing back the dirty pages of [offset, offset + length) without
// waiting (sync_file_range(2) with SYNC_FILE_RANGE_WRITE), so that a later
// fsync has less left to wait for. Advisory: durability still takes Fsync.
void StartWriteback(int fd, uint64_t offset, uint64_t length);

// fsyncs a directory, making the entries created, renamed or removed in it
// durable.
absl::Status FsyncDir(const std::string& path);

// Creates `path` (ALREADY_EXISTS if it exists) holding `contents` and
// fsyncs it. The caller fsyncs the directory.
absl::Status WriteNewFileDurably(const std::string& path,
                                 absl::string_view contents);

// Replaces `path` by a file holding `contents`, atomically and durably:
// writes and fsyncs `temp_path` (same filesystem, replaced if it exists),
// renames it over `path`, fsyncs the directory of `path`.
absl::Status ReplaceFileDurably(const std::string& temp_path,
                                const std::string& path,
                                absl::string_view contents);

// Reads a whole file; OUT_OF_RANGE if it is larger than `max_size`.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          size_t max_size);

// ReadSmallFile for a file the program keeps itself (a store's records): also
// FAILED_PRECONDITION unless `path` is a regular file, and neither follows a
// symlink nor waits for a writer on a FIFO, as open(2) would.
absl::StatusOr<std::string> ReadSmallRegularFile(const std::string& path,
                                                 size_t max_size);

// mkdir(path, 0755); returns true if it created it, false if a directory
// was already there.
absl::StatusOr<bool> MakeDir(const std::string& path);

// mkdir -p.
absl::Status MakeDirs(const std::string& path);

// FAILED_PRECONDITION, saying which, unless `st` (of `path`) is a directory
// this user owns that neither group nor others can write: a folder whose
// files a program trusts (its state, a cache, versions it serves) must be
// its own, or anyone who can write into it can plant them.
absl::Status CheckOwnDirectory(const struct stat& st, absl::string_view path);
// The same of the directory `path` (symlinks followed); OK if it does not
// exist and `absent_ok`.
absl::Status CheckOwnDirectory(const std::string& path, bool absent_ok);

// Opens the lock file `path`, creating it (0600) if absent, never through a
// symlink (O_NOFOLLOW: a link planted there is refused, not followed).
absl::StatusOr<UniqueFd> OpenLockFile(const std::string& path);

absl::Status Rename(const std::string& from, const std::string& to);

// The entries of a directory except "." and "..", sorted.
absl::StatusOr<std::vector<std::string>> ListDir(const std::string& path);
// As ListDir, of the directory open as `dir_fd` (not closed); `path` names it
// in messages.
absl::StatusOr<std::vector<std::string>> ListDirFd(int dir_fd,
                                                   absl::string_view path);

// Removes `path` and everything under it, never following symlinks. OK if
// `path` does not exist.
absl::Status RemoveRecursively(const std::string& path);

// Returns `size` bytes of `storage` that start on a page boundary: the
// kernel copies into misaligned buffers more slowly (docs/tuning.md).
absl::Span<uint8_t> PageAlignedBuffer(size_t size,
                                      std::vector<uint8_t>* storage);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_FILE_UTIL_H_
