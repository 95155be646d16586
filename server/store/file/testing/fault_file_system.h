// A FileSystem for tests that fails chosen calls and simulates a power cut:
// LevelDB's FaultInjectionTestEnv and SQLite's "fail the Nth I/O call" for
// the file store. It remembers what each successful fsync made durable, and
// DropUnsynced() rewrites the tracked directory to exactly that.

#ifndef VERITYD_SERVER_STORE_FILE_TESTING_FAULT_FILE_SYSTEM_H_
#define VERITYD_SERVER_STORE_FILE_TESTING_FAULT_FILE_SYSTEM_H_

#include <errno.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "lib/base/file_system.h"
#include "lib/base/file_util.h"

namespace verity::server {

// The kinds of call, one per FileSystem method (StartWriteback is advisory
// and never fails); kAny, in a Fault, matches all of them.
enum class FileOp {
  kAny,
  kOpen,
  kWrite,
  kPwrite,
  kPread,
  kFsync,
  kSyncFs,
  kRename,
  kUnlink,
  kMkdir,
  kList,
  kRemove,
};

absl::string_view FileOpName(FileOp op);

// Which calls fail, and how. Plain value.
struct Fault {
  FileOp op = FileOp::kWrite;
  // The matching call it hits, counting from 1 after Inject(); 0: every one.
  int nth = 0;
  // With nth: every matching call after the nth too (a disk that stays full).
  bool and_after = false;
  // Only calls whose path contains this; empty: any path.
  std::string path_contains;
  // The errno the call fails with.
  int error = EIO;
  // kWrite, kPwrite and kPread: the call moves half its bytes (at least one)
  // and succeeds instead of failing, as write(2) may when the disk fills or a
  // signal arrives.
  bool short_transfer = false;
};

// Thread-safe. Every call goes to the POSIX file system unless a fault or
// the crash point says otherwise; a failed call changes nothing on disk.
class FaultFileSystem final : public FileSystem {
 public:
  FaultFileSystem() = default;
  FaultFileSystem(const FaultFileSystem&) = delete;
  FaultFileSystem& operator=(const FaultFileSystem&) = delete;

  void Inject(Fault fault) ABSL_LOCKS_EXCLUDED(mu_);
  // The process stops just before the nth call from now (counting from 1),
  // of any kind: that call and every later one fail with EIO and touch
  // nothing, as if nothing ran after it.
  void CrashAtCall(int nth) ABSL_LOCKS_EXCLUDED(mu_);
  // Forgets the faults and the crash point; calls succeed again.
  void Reset() ABSL_LOCKS_EXCLUDED(mu_);
  bool crashed() const ABSL_LOCKS_EXCLUDED(mu_);
  // Calls of every kind so far.
  int calls() const ABSL_LOCKS_EXCLUDED(mu_);
  // "fsync <path>" for call number `call` (counting from 1), to name a step.
  std::string CallName(int call) const ABSL_LOCKS_EXCLUDED(mu_);
  // Calls a fault has failed or shortened so far, and the last of them.
  int faults_hit() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string last_hit() const ABSL_LOCKS_EXCLUDED(mu_);

  // Starts recording durability under `root`: what is there now counts as
  // durable.
  absl::Status TrackDurability(const std::string& root)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Rewrites the tracked root to what a power cut would leave: each
  // directory with the entries it had at its last successful fsync or
  // syncfs (or when tracking began), each file with the bytes it had at its
  // last successful fsync or syncfs (none if never). The process must be gone:
  // nothing may have the root open. Tracking goes on from the result.
  absl::Status DropUnsynced() ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<UniqueFd> OpenAt(int dir_fd, const std::string& path,
                                  int flags, mode_t mode) override;
  absl::StatusOr<size_t> Write(int fd, absl::Span<const uint8_t> data,
                               absl::string_view path) override;
  absl::StatusOr<size_t> Pwrite(int fd, uint64_t offset,
                                absl::Span<const uint8_t> data,
                                absl::string_view path) override;
  absl::StatusOr<size_t> Pread(int fd, uint64_t offset, absl::Span<uint8_t> out,
                               absl::string_view path) override;
  absl::Status Fsync(int fd, absl::string_view path) override;
  // Makes everything under the tracked root durable.
  absl::Status SyncFs(int fd, absl::string_view path) override;
  void StartWriteback(int fd, uint64_t offset, uint64_t length) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status Unlink(const std::string& path) override;
  absl::StatusOr<bool> MakeDir(const std::string& path) override;
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& path) override;
  absl::Status RemoveRecursively(const std::string& path) override;

 private:
  // (st_dev, st_ino): what a durable entry points at.
  using InodeId = std::pair<dev_t, ino_t>;
  // An inode as a power cut would find it.
  struct Durable {
    bool dir = false;
    std::string bytes;                       // a file's
    std::map<std::string, InodeId> entries;  // a directory's
  };
  struct Armed {
    Fault fault;
    int seen = 0;  // matching calls so far
  };

  // Counts the call; the errno to fail it with, or 0. Sets `*short_transfer`
  // if it should move half its bytes instead.
  int Check(FileOp op, absl::string_view path, bool* short_transfer = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Fail(int error, FileOp op, absl::string_view path);
  // After a successful fsync of `fd`: what it made durable.
  absl::Status RecordSync(int fd) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<InodeId> Snapshot(const std::string& path, int depth)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Materialize(const Durable& dir, const std::string& path,
                           int depth) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<Armed> faults_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> trace_ ABSL_GUARDED_BY(mu_);  // by call - 1
  int crash_at_ ABSL_GUARDED_BY(mu_) = 0;                // a call; 0: none
  bool crashed_ ABSL_GUARDED_BY(mu_) = false;
  int faults_hit_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_hit_ ABSL_GUARDED_BY(mu_);
  std::string root_ ABSL_GUARDED_BY(mu_);  // empty: not tracking
  InodeId root_id_ ABSL_GUARDED_BY(mu_);
  std::map<InodeId, Durable> durable_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_FILE_TESTING_FAULT_FILE_SYSTEM_H_
