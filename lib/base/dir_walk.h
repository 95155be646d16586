// Depth-first walks of a directory tree that hold one descriptor of it at a
// time, however deep it goes: a directory's names are listed once and kept,
// and the walk climbs back through ".." checked against the device and inode
// it came down from, so a tree moved while it is walked is an error, never a
// walk of somewhere else. No symlink is followed (O_NOFOLLOW at every name).

#ifndef VERITYD_LIB_BASE_DIR_WALK_H_
#define VERITYD_LIB_BASE_DIR_WALK_H_

#include <sys/stat.h>

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity {

// One entry met: the directory that holds it (open as `dir_fd`), its path
// beneath the walk's root ('/'-joined), its name and its lstat(2).
struct WalkEntry {
  int dir_fd;
  const std::string& path;
  const std::string& name;
  const struct stat& st;
};

struct WalkVisitor {
  // Called for each entry, in name order within a directory; true walks
  // into it (a directory). An error ends the walk with it.
  std::function<absl::StatusOr<bool>(const WalkEntry& entry)> visit;
  // Called, if set, once a directory walked into is done, with its parent
  // open as entry.dir_fd (its own descriptor is closed): for a removal.
  std::function<absl::Status(const WalkEntry& entry)> leave;
};

// Walks what the directory open as `root_fd` holds (`root_path` names it in
// messages). An entry gone before it is visited is skipped. FAILED_PRECONDITION
// if a directory is replaced or moved while walked; the errno of a failed
// call otherwise.
absl::Status WalkBeneath(int root_fd, absl::string_view root_path,
                         const WalkVisitor& visitor);

// Removes `name` in the directory open as `dir_fd` (`path` names it in
// messages): a file, a symlink (not what it points at) or a directory and
// all beneath it. OK if there is nothing there.
absl::Status RemoveBeneath(int dir_fd, const std::string& name,
                           const std::string& path);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_DIR_WALK_H_
