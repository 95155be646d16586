// Implements the atomic-writer layout with symlinks renamed into place (a
// rename(2) over a name is atomic, so every switch is one), each call
// relative to DIR's descriptor.

#include "lib/manifest/versioned_folder.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/base/bytes.h"
#include "lib/base/dir_walk.h"
#include "lib/base/status_macros.h"
#include "lib/tree/descriptor.h"

namespace verity {
namespace {

constexpr absl::string_view kData = "..data";
constexpr absl::string_view kStaging = "..staging-";
constexpr absl::string_view kTemp = "..tmp-";
constexpr size_t kMaxIdBytes = 200;
constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

// The target of the symlink `name` in `dir_fd`; empty if it is not one.
std::string ReadLinkAt(int dir_fd, const std::string& name) {
  std::string target(4096, '\0');
  const ssize_t n =
      readlinkat(dir_fd, name.c_str(), target.data(), target.size());
  if (n < 0) return "";
  target.resize(n);
  return target;
}

bool IsDirectoryAt(int dir_fd, const std::string& name) {
  struct stat st;
  return fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISDIR(st.st_mode);
}

absl::Status CheckId(absl::string_view id) {
  const bool plain = !id.empty() && id.size() <= kMaxIdBytes &&
                     std::all_of(id.begin(), id.end(), [](char c) {
                       return (c >= '0' && c <= '9') ||
                              (c >= 'a' && c <= 'z') || c == '.' || c == '_' ||
                              c == '-';
                     });
  if (!plain || id == "data" || absl::StartsWith(id, "staging-") ||
      absl::StartsWith(id, "tmp-") || absl::StartsWith(id, ".")) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", id, "' cannot name a version"));
  }
  return absl::OkStatus();
}

std::string TopLink(absl::string_view name) {
  return absl::StrCat(kData, "/", name);
}

std::string VersionName(absl::string_view id) { return absl::StrCat("..", id); }

std::string StagingName(absl::string_view id) {
  return absl::StrCat(kStaging, id);
}

// DIR's own checks: a real folder of this user's that no one else can
// write into.
absl::StatusOr<UniqueFd> OpenOwnFolder(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, "mkdir", dir);
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return ErrnoStatus(errno, "stat", dir);
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir, " is not a folder", S_ISLNK(st.st_mode) ? " (a symlink)" : ""));
  }
  ASSIGN_OR_RETURN(UniqueFd fd, OpenAt(AT_FDCWD, dir, kDirFlags));
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "fstat", dir);
  RETURN_IF_ERROR(CheckOwnDirectory(st, dir));
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          dir, " is in use by another process (another verity sync?)"));
    }
    return ErrnoStatus(errno, "flock", dir);
  }
  return fd;
}

}  // namespace

absl::StatusOr<VersionedFolder> VersionedFolder::Open(const std::string& dir) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenOwnFolder(dir));
  VersionedFolder folder(dir, std::move(fd));
  RETURN_IF_ERROR(folder.Repair());
  return folder;
}

std::string VersionedFolder::IdOf(absl::string_view digest) {
  return DigestFileName(digest);
}

absl::Status VersionedFolder::CheckTopNames(
    const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (absl::StartsWith(name, "..") || name.empty() ||
        name.find('/') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", absl::CEscape(name),
                       "' cannot be a top-level name: names beginning with "
                       "\"..\" are the layout's"));
    }
  }
  return absl::OkStatus();
}

std::string VersionedFolder::PathOf(absl::string_view id) const {
  return JoinPath(dir_, VersionName(id));
}

absl::StatusOr<UniqueFd> VersionedFolder::OpenVersion(
    absl::string_view id) const {
  RETURN_IF_ERROR(CheckId(id));
  return OpenAt(fd(), VersionName(id), kDirFlags);
}

absl::StatusOr<std::string> VersionedFolder::ReadCurrent() const {
  const std::string target = ReadLinkAt(fd(), std::string(kData));
  if (target.empty()) return std::string();
  const absl::string_view id = absl::StripPrefix(target, "..");
  if (id.size() == target.size() || !CheckId(id).ok() ||
      !IsDirectoryAt(fd(), target)) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir_, "/..data points at no version (", absl::CEscape(target), ")"));
  }
  return std::string(id);
}

absl::Status VersionedFolder::Repair() {
  ASSIGN_OR_RETURN(const std::string current, ReadCurrent());
  if (current != current_) {
    previous_.clear();  // switched by another hand: keep only what is shown
    current_ = current;
  }
  return Relink();
}

absl::Status VersionedFolder::Relink() {
  std::vector<std::string> names;
  if (!current_.empty()) {
    ASSIGN_OR_RETURN(const UniqueFd version, OpenVersion(current_));
    ASSIGN_OR_RETURN(names, ListDirFd(version.get(), PathOf(current_)));
    // A version this layout could not show was never switched to.
    RETURN_IF_ERROR(CheckTopNames(names));
  }
  for (const std::string& name : names) {
    if (ReadLinkAt(fd(), name) != TopLink(name)) {
      RETURN_IF_ERROR(ReplaceSymlink(name, TopLink(name)));
    }
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> entries,
                   ListDirFd(fd(), dir_));
  for (const std::string& entry : entries) {
    if (absl::StartsWith(entry, kTemp)) {
      if (unlinkat(fd(), entry.c_str(), 0) != 0 && errno != ENOENT) {
        return ErrnoStatus(errno, "unlink", JoinPath(dir_, entry));
      }
      continue;
    }
    if (absl::StartsWith(entry, "..") ||
        std::binary_search(names.begin(), names.end(), entry)) {
      continue;
    }
    if (ReadLinkAt(fd(), entry) != TopLink(entry)) {
      return absl::FailedPreconditionError(
          absl::StrCat(dir_, " holds ", absl::CEscape(entry),
                       ", which verity sync did not make: give it a folder "
                       "of its own"));
    }
    if (unlinkat(fd(), entry.c_str(), 0) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "unlink", JoinPath(dir_, entry));
    }
  }
  if (fsync(fd()) != 0) return ErrnoStatus(errno, "fsync", dir_);
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> VersionedFolder::Stage(absl::string_view id) {
  RETURN_IF_ERROR(CheckId(id));
  const std::string name = StagingName(id);
  RETURN_IF_ERROR(RemoveBeneath(fd(), name, JoinPath(dir_, name)));
  if (mkdirat(fd(), name.c_str(), 0755) != 0) {
    return ErrnoStatus(errno, "mkdir", JoinPath(dir_, name));
  }
  ASSIGN_OR_RETURN(UniqueFd staged, OpenAt(fd(), name, kDirFlags));
  if (fchmod(staged.get(), 0755) != 0) {
    return ErrnoStatus(errno, "chmod", JoinPath(dir_, name));
  }
  return staged;
}

absl::Status VersionedFolder::Discard(absl::string_view id) {
  RETURN_IF_ERROR(CheckId(id));
  const std::string name = StagingName(id);
  return RemoveBeneath(fd(), name, JoinPath(dir_, name));
}

absl::Status VersionedFolder::ReplaceSymlink(const std::string& name,
                                             const std::string& target) {
  const std::string temp = TempName();
  if (unlinkat(fd(), temp.c_str(), 0) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "unlink", JoinPath(dir_, temp));
  }
  if (symlinkat(target.c_str(), fd(), temp.c_str()) != 0) {
    return ErrnoStatus(errno, "symlink", JoinPath(dir_, temp));
  }
  if (renameat(fd(), temp.c_str(), fd(), name.c_str()) != 0) {
    return ErrnoStatus(errno, "rename", JoinPath(dir_, name));
  }
  return absl::OkStatus();
}

absl::Status VersionedFolder::Switch(absl::string_view id) {
  RETURN_IF_ERROR(CheckId(id));
  const std::string staged = StagingName(id);
  const std::string version = VersionName(id);
  if (IsDirectoryAt(fd(), staged)) {
    // A folder of the same id that this process did not write (a leftover,
    // or planted) is swapped out and removed, never switched to.
    const bool replace = IsDirectoryAt(fd(), version);
    if (renameat2(fd(), staged.c_str(), fd(), version.c_str(),
                  replace ? RENAME_EXCHANGE : RENAME_NOREPLACE) != 0) {
      return ErrnoStatus(errno, "rename", JoinPath(dir_, version));
    }
    if (replace) {
      RETURN_IF_ERROR(RemoveBeneath(fd(), staged, JoinPath(dir_, staged)));
    }
    if (fsync(fd()) != 0) return ErrnoStatus(errno, "fsync", dir_);
  } else if (!Wrote(id)) {
    return absl::FailedPreconditionError(
        absl::StrCat("no version '", id, "' was staged"));
  }
  // The commit point: from here on a crash leaves DIR at `id`, and Repair
  // finishes the links.
  RETURN_IF_ERROR(ReplaceSymlink(std::string(kData), version));
  if (fsync(fd()) != 0) return ErrnoStatus(errno, "fsync", dir_);
  wrote_.insert(std::string(id));
  if (current_ != id) previous_ = std::exchange(current_, std::string(id));
  return Relink();
}

absl::Status VersionedFolder::Prune() {
  ASSIGN_OR_RETURN(const std::vector<std::string> names, ListDirFd(fd(), dir_));
  for (const std::string& name : names) {
    if (!absl::StartsWith(name, "..") || name == kData ||
        !IsDirectoryAt(fd(), name)) {
      continue;
    }
    const absl::string_view id = absl::StripPrefix(name, "..");
    if (id == current_ || (!previous_.empty() && id == previous_)) continue;
    RETURN_IF_ERROR(RemoveBeneath(fd(), name, JoinPath(dir_, name)));
    wrote_.erase(std::string(id));
  }
  return absl::OkStatus();
}

absl::Status VersionedFolder::WriteFile(absl::string_view name,
                                        absl::string_view contents) {
  if (!absl::StartsWith(name, "..") || name == kData ||
      absl::StartsWith(name, kStaging) || absl::StartsWith(name, kTemp)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name, "' is not a file of the layout"));
  }
  const std::string temp = TempName();
  const std::string path = JoinPath(dir_, name);
  {
    ASSIGN_OR_RETURN(
        UniqueFd file,
        OpenAt(fd(), temp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644));
    RETURN_IF_ERROR(WriteAll(file.get(), AsBytes(contents), path));
    if (fsync(file.get()) != 0) return ErrnoStatus(errno, "fsync", path);
    RETURN_IF_ERROR(file.Close(path));
  }
  if (renameat(fd(), temp.c_str(), fd(), std::string(name).c_str()) != 0) {
    return ErrnoStatus(errno, "rename", path);
  }
  if (fsync(fd()) != 0) return ErrnoStatus(errno, "fsync", dir_);
  return absl::OkStatus();
}

}  // namespace verity
