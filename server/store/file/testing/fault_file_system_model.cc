// FaultFileSystem's durability model: what each fsync made durable, and the
// directory a power cut would leave.

#include <fcntl.h>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "server/store/file/testing/fault_file_system.h"

namespace verity::server {
namespace {

// Deep enough for any store; more means a cycle in the model, a bug.
constexpr int kMaxDepth = 32;
std::string ProcPath(int fd) { return absl::StrCat("/proc/self/fd/", fd); }

// The `size` bytes of a file (test blobs are small: copied whole at each of
// their fsyncs).
absl::StatusOr<std::string> ReadBytes(const std::string& path, off_t size) {
  ASSIGN_OR_RETURN(const UniqueFd fd, OpenFile(path, O_RDONLY));
  std::string bytes(static_cast<size_t>(size), '\0');
  ASSIGN_OR_RETURN(const size_t n,
                   PreadUpTo(fd.get(), 0, AsMutableBytes(&bytes), path));
  bytes.resize(n);
  return bytes;
}

absl::Status WriteFile(const std::string& path, absl::string_view bytes) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_WRONLY | O_CREAT | O_EXCL));
  RETURN_IF_ERROR(WriteAll(fd.get(), AsBytes(bytes), path));
  return fd.Close(path);
}

}  // namespace

absl::Status FaultFileSystem::RecordSync(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoStatus(errno, "fstat", ProcPath(fd));
  Durable& self = durable_[{st.st_dev, st.st_ino}];
  if (S_ISREG(st.st_mode)) {
    // The descriptor may be write-only: read through a fresh one.
    ASSIGN_OR_RETURN(self.bytes, ReadBytes(ProcPath(fd), st.st_size));
    return absl::OkStatus();
  }
  if (!S_ISDIR(st.st_mode)) return absl::OkStatus();
  ASSIGN_OR_RETURN(const std::vector<std::string> names,
                   PosixFileSystem().ListDir(ProcPath(fd)));
  std::map<std::string, InodeId> entries;
  for (const std::string& name : names) {
    struct stat child;
    if (fstatat(fd, name.c_str(), &child, AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoStatus(errno, "fstatat", name);
    }
    if (!S_ISREG(child.st_mode) && !S_ISDIR(child.st_mode)) continue;
    const InodeId id{child.st_dev, child.st_ino};
    // A new entry whose inode was never synced: a file with no bytes, a
    // directory with no entries.
    if (durable_.count(id) == 0) {
      durable_[id] = Durable{S_ISDIR(child.st_mode)};
    }
    entries[name] = id;
  }
  // durable_ may have grown: look the directory up again.
  Durable& dir = durable_[{st.st_dev, st.st_ino}];
  dir.dir = true;
  dir.entries = std::move(entries);
  return absl::OkStatus();
}

absl::StatusOr<FaultFileSystem::InodeId> FaultFileSystem::Snapshot(
    const std::string& path, int depth) {
  if (depth > kMaxDepth) return absl::InternalError("too deep: " + path);
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return ErrnoStatus(errno, "lstat", path);
  const InodeId id{st.st_dev, st.st_ino};
  Durable node;
  if (S_ISREG(st.st_mode)) {
    ASSIGN_OR_RETURN(node.bytes, ReadBytes(path, st.st_size));
  } else if (S_ISDIR(st.st_mode)) {
    node.dir = true;
    ASSIGN_OR_RETURN(const std::vector<std::string> names,
                     PosixFileSystem().ListDir(path));
    for (const std::string& name : names) {
      absl::StatusOr<InodeId> child = Snapshot(JoinPath(path, name), depth + 1);
      if (absl::IsFailedPrecondition(child.status())) continue;
      RETURN_IF_ERROR(child.status());
      node.entries[name] = *child;
    }
  } else {
    return absl::FailedPreconditionError("neither file nor directory: " + path);
  }
  durable_[id] = std::move(node);
  return id;
}

absl::Status FaultFileSystem::TrackDurability(const std::string& root) {
  absl::MutexLock lock(&mu_);
  durable_.clear();
  root_ = root;
  ASSIGN_OR_RETURN(root_id_, Snapshot(root, 0));
  return absl::OkStatus();
}

absl::Status FaultFileSystem::Materialize(const Durable& dir,
                                          const std::string& path,
                                          int depth) const {
  if (depth > kMaxDepth) return absl::InternalError("too deep: " + path);
  for (const auto& [name, id] : dir.entries) {
    const auto it = durable_.find(id);
    if (it == durable_.end()) continue;
    const std::string child = JoinPath(path, name);
    if (it->second.dir) {
      RETURN_IF_ERROR(::verity::MakeDir(child).status());
      RETURN_IF_ERROR(Materialize(it->second, child, depth + 1));
    } else {
      RETURN_IF_ERROR(WriteFile(child, it->second.bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status FaultFileSystem::DropUnsynced() {
  absl::MutexLock lock(&mu_);
  if (root_.empty()) return absl::FailedPreconditionError("not tracking");
  ASSIGN_OR_RETURN(const std::vector<std::string> entries,
                   ::verity::ListDir(root_));
  for (const std::string& entry : entries) {
    RETURN_IF_ERROR(::verity::RemoveRecursively(JoinPath(root_, entry)));
  }
  // Copied out first: materializing must not see the map change under it.
  const Durable root = durable_[root_id_];
  RETURN_IF_ERROR(Materialize(root, root_, 0));
  durable_.clear();
  ASSIGN_OR_RETURN(root_id_, Snapshot(root_, 0));
  return absl::OkStatus();
}

}  // namespace verity::server
