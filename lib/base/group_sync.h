// Group commit for a file system: callers that need what they wrote made
// durable share one syncfs(2), as a database's transactions share one log
// flush. A caller's Sync() returns once a syncfs that began after the call
// has ended, so it covers every write the caller made before it; callers
// that arrive while one runs wait for the next, and all of them share it.
// A writer takes a Mark() before it writes: a syncfs that began since and
// failed may have dropped its pages (Linux forgets dirty pages whose
// writeback failed), so its Sync() fails too, even if a later one succeeds.
// So N writers in flight cost about two syncfs calls between them, where a
// fsync of each file and directory costs several flushes each.
//
// syncfs(2) flushes the whole file system, others' dirty data included: for
// a store on a file system of its own, or one whose other writers are light.

#ifndef VERITYD_LIB_BASE_GROUP_SYNC_H_
#define VERITYD_LIB_BASE_GROUP_SYNC_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/base/file_system.h"

namespace verity {

// Thread-safe.
class GroupSync {
 public:
  // Syncs the file system holding the directory `path`, through `fs`, which
  // must outlive this.
  static absl::StatusOr<std::unique_ptr<GroupSync>> Create(
      FileSystem& fs, const std::string& path);

  GroupSync(const GroupSync&) = delete;
  GroupSync& operator=(const GroupSync&) = delete;

  // What a writer holds from before its first write to its Sync().
  uint64_t Mark() const ABSL_LOCKS_EXCLUDED(mu_);

  // Returns once everything written before the call is durable, or the
  // error of a syncfs begun since `mark` (which may have lost some of it).
  absl::Status Sync(uint64_t mark) ABSL_LOCKS_EXCLUDED(mu_);

  // syncfs calls made so far (for tests and metrics).
  uint64_t syncs() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  GroupSync(FileSystem& fs, std::string path, UniqueFd dir)
      : fs_(fs), path_(std::move(path)), dir_(std::move(dir)) {}

  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return begun_ == ended_;
  }

  FileSystem& fs_;
  const std::string path_;
  const UniqueFd dir_;
  mutable absl::Mutex mu_;
  // syncfs calls begun and ended, one at a time, in order.
  uint64_t begun_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t ended_ ABSL_GUARDED_BY(mu_) = 0;
  // The last one that failed, by number (0: none), and how.
  uint64_t failed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity

#endif  // VERITYD_LIB_BASE_GROUP_SYNC_H_
