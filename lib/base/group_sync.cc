// Implements GroupSync: the first caller to find no syncfs running runs the
// next one, outside the lock; the others wait for the one that covers them.

#include "lib/base/group_sync.h"

#include <fcntl.h>

#include <utility>

#include "lib/base/status_macros.h"

namespace verity {

absl::StatusOr<std::unique_ptr<GroupSync>> GroupSync::Create(
    FileSystem& fs, const std::string& path) {
  ASSIGN_OR_RETURN(UniqueFd dir, OpenFile(fs, path, O_RDONLY | O_DIRECTORY));
  return std::unique_ptr<GroupSync>(new GroupSync(fs, path, std::move(dir)));
}

uint64_t GroupSync::Mark() const {
  absl::MutexLock lock(&mu_);
  return begun_;
}

absl::Status GroupSync::Sync(uint64_t mark) {
  absl::MutexLock lock(&mu_);
  // The first syncfs to begin from now on covers this caller's writes.
  const uint64_t covering = begun_ + 1;
  while (ended_ < covering) {
    if (!Idle()) {
      mu_.Await(absl::Condition(this, &GroupSync::Idle));
      continue;
    }
    // None running: this caller runs the next, for everyone waiting.
    const uint64_t mine = ++begun_;
    mu_.Unlock();
    absl::Status status = fs_.SyncFs(dir_.get(), path_);
    mu_.Lock();
    ended_ = mine;
    if (!status.ok()) {
      failed_ = mine;
      failure_ = std::move(status);
    }
  }
  if (failed_ > mark) return failure_;
  return absl::OkStatus();
}

uint64_t GroupSync::syncs() const {
  absl::MutexLock lock(&mu_);
  return ended_;
}

}  // namespace verity
