// The file operations the store makes, behind one interface (LevelDB's Env,
// reduced to what verityd uses), so that a test can fail chosen calls or
// simulate a crash; the POSIX implementation is the production default, and
// the durable-write helpers are written once, over the interface.

#ifndef VERITYD_LIB_BASE_FILE_SYSTEM_H_
#define VERITYD_LIB_BASE_FILE_SYSTEM_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/base/file_util.h"

namespace verity {

// Every method is one system call (RemoveRecursively: one logical step), so
// that a test can fail exactly one; errors are ErrnoStatus's. EINTR is
// retried inside, never returned. Implementations are thread-safe. `path`
// arguments of fd calls only name the file in messages.
class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // openat(2) with O_CLOEXEC added; `dir_fd` may be AT_FDCWD.
  virtual absl::StatusOr<UniqueFd> OpenAt(int dir_fd, const std::string& path,
                                          int flags, mode_t mode) = 0;
  // One write(2): how many bytes of `data` it took (at least 1 unless
  // `data` is empty).
  virtual absl::StatusOr<size_t> Write(int fd, absl::Span<const uint8_t> data,
                                       absl::string_view path) = 0;
  // One pwrite(2): how many bytes of `data` it took (at least 1 unless
  // `data` is empty).
  virtual absl::StatusOr<size_t> Pwrite(int fd, uint64_t offset,
                                        absl::Span<const uint8_t> data,
                                        absl::string_view path) = 0;
  // One pread(2): how many bytes it read; 0 at end of file.
  virtual absl::StatusOr<size_t> Pread(int fd, uint64_t offset,
                                       absl::Span<uint8_t> out,
                                       absl::string_view path) = 0;
  // fsync(2) of a file or a directory.
  virtual absl::Status Fsync(int fd, absl::string_view path) = 0;
  // syncfs(2): every file and directory of the file system holding `fd`
  // made durable, and any writeback error on it since the last call.
  virtual absl::Status SyncFs(int fd, absl::string_view path) = 0;
  // Advisory, never fails: see StartWriteback in file_util.h.
  virtual void StartWriteback(int fd, uint64_t offset, uint64_t length) = 0;
  virtual absl::Status Rename(const std::string& from,
                              const std::string& to) = 0;
  // NOT_FOUND if there is no such file.
  virtual absl::Status Unlink(const std::string& path) = 0;
  // As MakeDir in file_util.h: true if it created the directory.
  virtual absl::StatusOr<bool> MakeDir(const std::string& path) = 0;
  // The entries except "." and "..", sorted.
  virtual absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& path) = 0;
  // As RemoveRecursively in file_util.h.
  virtual absl::Status RemoveRecursively(const std::string& path) = 0;
  // fstat(2)'s modification time. By default the real call: a test double
  // that does not fail it need not override it.
  virtual absl::StatusOr<absl::Time> ModifiedTime(int fd,
                                                  absl::string_view path);
  // futimens(2): the modification time set to `time`, the access time left.
  virtual absl::Status SetModifiedTime(int fd, absl::Time time,
                                       absl::string_view path);
};

// The real file system. A process-wide immutable instance.
FileSystem& PosixFileSystem();

// The helpers below are the same steps whatever the file system; file_util.h's
// versions of them run these on PosixFileSystem().

absl::StatusOr<UniqueFd> OpenFile(FileSystem& fs, const std::string& path,
                                  int flags, mode_t mode = 0644);

// Writes all of `data`, however many calls it takes.
absl::Status WriteAll(FileSystem& fs, int fd, absl::Span<const uint8_t> data,
                      absl::string_view path);

// Writes all of `data` at `offset`, however many calls it takes.
absl::Status PwriteAll(FileSystem& fs, int fd, uint64_t offset,
                       absl::Span<const uint8_t> data, absl::string_view path);

// Reads out.size() bytes at `offset`, or fewer only at end of file; returns
// how many were read.
absl::StatusOr<size_t> PreadUpTo(FileSystem& fs, int fd, uint64_t offset,
                                 absl::Span<uint8_t> out,
                                 absl::string_view path);

// fsyncs a directory, making the entries created, renamed or removed in it
// durable.
absl::Status FsyncDir(FileSystem& fs, const std::string& path);

// Creates `path` (ALREADY_EXISTS if it exists) holding `contents`, fsyncs
// and closes it. The caller fsyncs the directory.
// Creates the file at `path` (which must not exist) with `contents`; durable
// only once its file system is synced.
absl::Status WriteNewFile(FileSystem& fs, const std::string& path,
                          absl::string_view contents);

absl::Status WriteNewFileDurably(FileSystem& fs, const std::string& path,
                                 absl::string_view contents);

// Replaces `path` by a file holding `contents`, atomically and durably:
// writes and fsyncs `temp_path` (same filesystem, replaced if it exists),
// renames it over `path`, fsyncs the directory of `path`.
absl::Status ReplaceFileDurably(FileSystem& fs, const std::string& temp_path,
                                const std::string& path,
                                absl::string_view contents);

// Reads a whole file; OUT_OF_RANGE if it is larger than `max_size`.
absl::StatusOr<std::string> ReadSmallFile(FileSystem& fs,
                                          const std::string& path,
                                          size_t max_size);

// ReadSmallFile for a file the program keeps itself (a store's records): also
// FAILED_PRECONDITION unless `path` is a regular file, and neither follows a
// symlink nor waits for a writer on a FIFO, as open(2) would.
absl::StatusOr<std::string> ReadSmallRegularFile(FileSystem& fs,
                                                 const std::string& path,
                                                 size_t max_size);

// ReadSmallRegularFile of the file open as `fd` (`path` names it in errors).
absl::StatusOr<std::string> ReadRegularFd(FileSystem& fs, int fd,
                                          const std::string& path,
                                          size_t max_size);

// mkdir -p.
absl::Status MakeDirs(FileSystem& fs, const std::string& path);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_FILE_SYSTEM_H_
