// Implements WalkBeneath with a stack of levels (a directory's names and how
// far the walk is through them, and its device and inode), the current
// directory's descriptor alone held open.

#include "lib/base/dir_walk.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"

namespace verity {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

struct Level {
  std::vector<std::string> names;
  size_t next = 0;
  std::string path;  // beneath the root; "" for the root
  std::string name;
  dev_t dev = 0;
  ino_t ino = 0;
};

absl::Status Moved(absl::string_view path) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, " was replaced or moved while it was walked"));
}

// Whether the directory open as `fd` is the one (`dev`, `ino`).
absl::Status CheckSame(int fd, dev_t dev, ino_t ino, absl::string_view path) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoStatus(errno, "fstat", path);
  if (st.st_dev != dev || st.st_ino != ino) return Moved(path);
  return absl::OkStatus();
}

std::string Child(absl::string_view parent, absl::string_view name) {
  return parent.empty() ? std::string(name) : absl::StrCat(parent, "/", name);
}

}  // namespace

absl::Status WalkBeneath(int root_fd, absl::string_view root_path,
                         const WalkVisitor& visitor) {
  std::vector<Level> levels(1);
  {
    struct stat st;
    if (fstat(root_fd, &st) != 0) return ErrnoStatus(errno, "fstat", root_path);
    levels[0].dev = st.st_dev;
    levels[0].ino = st.st_ino;
    ASSIGN_OR_RETURN(levels[0].names, ListDirFd(root_fd, root_path));
  }
  UniqueFd owned;  // the current directory, unless it is the root
  int current = root_fd;
  while (true) {
    Level& top = levels.back();
    if (top.next < top.names.size()) {
      const std::string name = top.names[top.next++];
      const std::string path = Child(top.path, name);
      struct stat st;
      if (fstatat(current, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;
        return ErrnoStatus(errno, "stat", JoinPath(root_path, path));
      }
      ASSIGN_OR_RETURN(const bool descend,
                       visitor.visit(WalkEntry{current, path, name, st}));
      if (!descend || !S_ISDIR(st.st_mode)) continue;
      const std::string full = JoinPath(root_path, path);
      ASSIGN_OR_RETURN(UniqueFd child, OpenAt(current, name, kDirFlags));
      RETURN_IF_ERROR(CheckSame(child.get(), st.st_dev, st.st_ino, full));
      Level next{{}, 0, path, name, st.st_dev, st.st_ino};
      ASSIGN_OR_RETURN(next.names, ListDirFd(child.get(), full));
      owned = std::move(child);
      current = owned.get();
      levels.push_back(std::move(next));
      continue;
    }
    if (levels.size() == 1) return absl::OkStatus();
    const Level done = std::move(levels.back());
    levels.pop_back();
    // Back up one level: through "..", which must be where the walk came
    // down from.
    if (levels.size() == 1) {
      owned = UniqueFd();
      current = root_fd;
    } else {
      const std::string parent_path = JoinPath(root_path, levels.back().path);
      ASSIGN_OR_RETURN(UniqueFd parent, OpenAt(current, "..", kDirFlags));
      RETURN_IF_ERROR(CheckSame(parent.get(), levels.back().dev,
                                levels.back().ino, parent_path));
      owned = std::move(parent);
      current = owned.get();
    }
    if (visitor.leave) {
      struct stat st = {};
      st.st_mode = S_IFDIR;
      st.st_dev = done.dev;
      st.st_ino = done.ino;
      RETURN_IF_ERROR(
          visitor.leave(WalkEntry{current, done.path, done.name, st}));
    }
  }
}

absl::Status RemoveBeneath(int dir_fd, const std::string& name,
                           const std::string& path) {
  if (unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) {
    return absl::OkStatus();
  }
  if (errno != EISDIR) return ErrnoStatus(errno, "unlink", path);
  // O_NOFOLLOW: a symlink swapped in meanwhile is not walked into.
  ASSIGN_OR_RETURN(const UniqueFd root, OpenAt(dir_fd, name, kDirFlags));
  WalkVisitor remove;
  remove.visit = [&path](const WalkEntry& entry) -> absl::StatusOr<bool> {
    if (S_ISDIR(entry.st.st_mode)) return true;
    if (unlinkat(entry.dir_fd, entry.name.c_str(), 0) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "unlink", JoinPath(path, entry.path));
    }
    return false;
  };
  remove.leave = [&path](const WalkEntry& entry) {
    if (unlinkat(entry.dir_fd, entry.name.c_str(), AT_REMOVEDIR) != 0 &&
        errno != ENOENT) {
      return ErrnoStatus(errno, "rmdir", JoinPath(path, entry.path));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(WalkBeneath(root.get(), path, remove));
  if (unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "rmdir", path);
  }
  return absl::OkStatus();
}

}  // namespace verity
