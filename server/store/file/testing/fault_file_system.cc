// Implements FaultFileSystem: a counter and a list of faults in front of the
// POSIX calls, and a model of what fsync made durable, by inode.

#include "server/store/file/testing/fault_file_system.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace verity::server {

absl::string_view FileOpName(FileOp op) {
  switch (op) {
    case FileOp::kAny:
      return "any";
    case FileOp::kOpen:
      return "open";
    case FileOp::kWrite:
      return "write";
    case FileOp::kPwrite:
      return "pwrite";
    case FileOp::kPread:
      return "pread";
    case FileOp::kFsync:
      return "fsync";
    case FileOp::kSyncFs:
      return "syncfs";
    case FileOp::kRename:
      return "rename";
    case FileOp::kUnlink:
      return "unlink";
    case FileOp::kMkdir:
      return "mkdir";
    case FileOp::kList:
      return "list";
    case FileOp::kRemove:
      return "remove";
  }
  return "?";
}

void FaultFileSystem::Inject(Fault fault) {
  absl::MutexLock lock(&mu_);
  faults_.push_back(Armed{std::move(fault)});
}

void FaultFileSystem::CrashAtCall(int nth) {
  absl::MutexLock lock(&mu_);
  crash_at_ = static_cast<int>(trace_.size()) + nth;
}

void FaultFileSystem::Reset() {
  absl::MutexLock lock(&mu_);
  faults_.clear();
  crash_at_ = 0;
  crashed_ = false;
  last_hit_.clear();
}

bool FaultFileSystem::crashed() const {
  absl::MutexLock lock(&mu_);
  return crashed_;
}

int FaultFileSystem::calls() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(trace_.size());
}

std::string FaultFileSystem::CallName(int call) const {
  absl::MutexLock lock(&mu_);
  if (call < 1 || call > static_cast<int>(trace_.size())) return "(no call)";
  return trace_[call - 1];
}

int FaultFileSystem::faults_hit() const {
  absl::MutexLock lock(&mu_);
  return faults_hit_;
}

std::string FaultFileSystem::last_hit() const {
  absl::MutexLock lock(&mu_);
  return last_hit_;
}

int FaultFileSystem::Check(FileOp op, absl::string_view path,
                           bool* short_transfer) {
  absl::MutexLock lock(&mu_);
  trace_.push_back(absl::StrCat(FileOpName(op), " ", path));
  const int call = static_cast<int>(trace_.size());
  if (crashed_ || (crash_at_ > 0 && call >= crash_at_)) {
    crashed_ = true;
    return EIO;
  }
  int error = 0;
  for (Armed& armed : faults_) {
    const Fault& fault = armed.fault;
    if ((fault.op != op && fault.op != FileOp::kAny) ||
        !absl::StrContains(path, fault.path_contains)) {
      continue;
    }
    ++armed.seen;
    const bool hit = fault.nth == 0 || armed.seen == fault.nth ||
                     (fault.and_after && armed.seen > fault.nth);
    if (!hit || error != 0) continue;
    if (!fault.short_transfer) {
      error = fault.error;
    } else if (short_transfer != nullptr) {
      *short_transfer = true;
    } else {
      continue;
    }
    ++faults_hit_;
    last_hit_ = trace_.back();
  }
  return error;
}

absl::Status FaultFileSystem::Fail(int error, FileOp op,
                                   absl::string_view path) {
  return ErrnoStatus(error, absl::StrCat(FileOpName(op), " (injected)"), path);
}

absl::StatusOr<UniqueFd> FaultFileSystem::OpenAt(int dir_fd,
                                                 const std::string& path,
                                                 int flags, mode_t mode) {
  if (const int error = Check(FileOp::kOpen, path)) {
    return Fail(error, FileOp::kOpen, path);
  }
  ASSIGN_OR_RETURN(UniqueFd fd,
                   PosixFileSystem().OpenAt(dir_fd, path, flags, mode));
  struct stat st;
  if ((flags & O_EXCL) != 0 && fstat(fd.get(), &st) == 0) {
    // A new inode, maybe with a recycled number: nothing of it is durable.
    absl::MutexLock lock(&mu_);
    durable_[{st.st_dev, st.st_ino}] = Durable{};
  }
  return fd;
}

absl::StatusOr<size_t> FaultFileSystem::Write(int fd,
                                              absl::Span<const uint8_t> data,
                                              absl::string_view path) {
  bool short_transfer = false;
  if (const int error = Check(FileOp::kWrite, path, &short_transfer)) {
    return Fail(error, FileOp::kWrite, path);
  }
  if (short_transfer && data.size() > 1) data = data.first(data.size() / 2);
  return PosixFileSystem().Write(fd, data, path);
}

absl::StatusOr<size_t> FaultFileSystem::Pwrite(int fd, uint64_t offset,
                                               absl::Span<const uint8_t> data,
                                               absl::string_view path) {
  bool short_transfer = false;
  if (const int error = Check(FileOp::kPwrite, path, &short_transfer)) {
    return Fail(error, FileOp::kPwrite, path);
  }
  if (short_transfer && data.size() > 1) data = data.first(data.size() / 2);
  return PosixFileSystem().Pwrite(fd, offset, data, path);
}

absl::StatusOr<size_t> FaultFileSystem::Pread(int fd, uint64_t offset,
                                              absl::Span<uint8_t> out,
                                              absl::string_view path) {
  bool short_transfer = false;
  if (const int error = Check(FileOp::kPread, path, &short_transfer)) {
    return Fail(error, FileOp::kPread, path);
  }
  if (short_transfer && out.size() > 1) out = out.first(out.size() / 2);
  return PosixFileSystem().Pread(fd, offset, out, path);
}

absl::Status FaultFileSystem::Fsync(int fd, absl::string_view path) {
  if (const int error = Check(FileOp::kFsync, path)) {
    return Fail(error, FileOp::kFsync, path);
  }
  RETURN_IF_ERROR(PosixFileSystem().Fsync(fd, path));
  absl::MutexLock lock(&mu_);
  return root_.empty() ? absl::OkStatus() : RecordSync(fd);
}

absl::Status FaultFileSystem::SyncFs(int fd, absl::string_view path) {
  if (const int error = Check(FileOp::kSyncFs, path)) {
    return Fail(error, FileOp::kSyncFs, path);
  }
  RETURN_IF_ERROR(PosixFileSystem().SyncFs(fd, path));
  absl::MutexLock lock(&mu_);
  if (root_.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(root_id_, Snapshot(root_, 0));
  return absl::OkStatus();
}

void FaultFileSystem::StartWriteback(int fd, uint64_t offset, uint64_t length) {
  // Advisory: not a step, and it makes nothing durable.
  if (crashed()) return;
  PosixFileSystem().StartWriteback(fd, offset, length);
}

absl::Status FaultFileSystem::Rename(const std::string& from,
                                     const std::string& to) {
  const std::string both = absl::StrCat(from, " to ", to);
  if (const int error = Check(FileOp::kRename, both)) {
    return Fail(error, FileOp::kRename, both);
  }
  return PosixFileSystem().Rename(from, to);
}

absl::Status FaultFileSystem::Unlink(const std::string& path) {
  if (const int error = Check(FileOp::kUnlink, path)) {
    return Fail(error, FileOp::kUnlink, path);
  }
  return PosixFileSystem().Unlink(path);
}

absl::StatusOr<bool> FaultFileSystem::MakeDir(const std::string& path) {
  if (const int error = Check(FileOp::kMkdir, path)) {
    return Fail(error, FileOp::kMkdir, path);
  }
  ASSIGN_OR_RETURN(const bool created, PosixFileSystem().MakeDir(path));
  struct stat st;
  if (created && lstat(path.c_str(), &st) == 0) {
    absl::MutexLock lock(&mu_);
    durable_[{st.st_dev, st.st_ino}] = Durable{/*dir=*/true};
  }
  return created;
}

absl::StatusOr<std::vector<std::string>> FaultFileSystem::ListDir(
    const std::string& path) {
  if (const int error = Check(FileOp::kList, path)) {
    return Fail(error, FileOp::kList, path);
  }
  return PosixFileSystem().ListDir(path);
}

absl::Status FaultFileSystem::RemoveRecursively(const std::string& path) {
  if (const int error = Check(FileOp::kRemove, path)) {
    return Fail(error, FileOp::kRemove, path);
  }
  return PosixFileSystem().RemoveRecursively(path);
}

}  // namespace verity::server
