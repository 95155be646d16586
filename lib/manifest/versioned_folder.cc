// Implements the atomic-writer layout with symlinks renamed into place: a
// rename(2) over a name is atomic, so every switch is one.

#include "lib/manifest/versioned_folder.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/tree/descriptor.h"

namespace verity {
namespace {

constexpr absl::string_view kData = "..data";
constexpr absl::string_view kStaging = "..staging-";
constexpr absl::string_view kTemp = "..tmp-";
constexpr size_t kMaxIdBytes = 200;

// The target of the symlink `path`; empty if it is not one.
std::string ReadLink(const std::string& path) {
  std::string target(4096, '\0');
  const ssize_t n = readlink(path.c_str(), target.data(), target.size());
  if (n < 0) return "";
  target.resize(n);
  return target;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
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

}  // namespace

absl::StatusOr<VersionedFolder> VersionedFolder::Open(const std::string& dir) {
  RETURN_IF_ERROR(MakeDirs(dir));
  VersionedFolder folder(dir);
  ASSIGN_OR_RETURN(const std::vector<std::string> names, ListDir(dir));
  for (const std::string& name : names) {
    const std::string path = JoinPath(dir, name);
    if (name == kData) {
      folder.current_ = std::string(absl::StripPrefix(ReadLink(path), ".."));
    } else if (!absl::StartsWith(name, "..") &&
               ReadLink(path) != TopLink(name)) {
      return absl::FailedPreconditionError(absl::StrCat(
          dir, " holds ", name,
          ", which verity sync did not make: give it a folder of its own"));
    }
  }
  if (!folder.current_.empty() && !folder.Has(folder.current_)) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, "/..data points at no version"));
  }
  return folder;
}

std::string VersionedFolder::IdOf(absl::string_view digest) {
  return DigestFileName(digest);
}

bool VersionedFolder::Has(absl::string_view id) const {
  return CheckId(id).ok() && IsDirectory(PathOf(id));
}

std::string VersionedFolder::PathOf(absl::string_view id) const {
  return JoinPath(dir_, absl::StrCat("..", id));
}

absl::StatusOr<std::string> VersionedFolder::Stage(absl::string_view id) {
  RETURN_IF_ERROR(CheckId(id));
  const std::string path = JoinPath(dir_, absl::StrCat(kStaging, id));
  RETURN_IF_ERROR(RemoveRecursively(path));
  if (mkdir(path.c_str(), 0755) != 0) return ErrnoStatus(errno, "mkdir", path);
  return path;
}

absl::Status VersionedFolder::Discard(absl::string_view id) {
  RETURN_IF_ERROR(CheckId(id));
  return RemoveRecursively(JoinPath(dir_, absl::StrCat(kStaging, id)));
}

absl::Status VersionedFolder::ReplaceSymlink(const std::string& name,
                                             const std::string& target) {
  const std::string temp = JoinPath(dir_, absl::StrCat(kTemp, name));
  if (unlink(temp.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "unlink", temp);
  }
  if (symlink(target.c_str(), temp.c_str()) != 0) {
    return ErrnoStatus(errno, "symlink", temp);
  }
  return Rename(temp, JoinPath(dir_, name));
}

absl::Status VersionedFolder::RelinkTopLevel(
    const std::vector<std::string>& top_names) {
  for (const std::string& name : top_names) {
    if (ReadLink(JoinPath(dir_, name)) != TopLink(name)) {
      RETURN_IF_ERROR(ReplaceSymlink(name, TopLink(name)));
    }
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> names, ListDir(dir_));
  for (const std::string& name : names) {
    if (absl::StartsWith(name, "..") ||
        std::find(top_names.begin(), top_names.end(), name) !=
            top_names.end()) {
      continue;
    }
    const std::string path = JoinPath(dir_, name);
    if (unlink(path.c_str()) != 0) return ErrnoStatus(errno, "unlink", path);
  }
  return absl::OkStatus();
}

absl::Status VersionedFolder::Prune() {
  ASSIGN_OR_RETURN(const std::vector<std::string> names, ListDir(dir_));
  for (const std::string& name : names) {
    if (!absl::StartsWith(name, "..") || name == kData) continue;
    const std::string path = JoinPath(dir_, name);
    const absl::string_view id = absl::StripPrefix(name, "..");
    if (absl::StartsWith(name, kTemp)) {
      if (unlink(path.c_str()) != 0 && errno != ENOENT) {
        return ErrnoStatus(errno, "unlink", path);
      }
    } else if (IsDirectory(path) && id != current_ && id != previous_) {
      RETURN_IF_ERROR(RemoveRecursively(path));
    }
  }
  return absl::OkStatus();
}

absl::Status VersionedFolder::Switch(
    absl::string_view id, const std::vector<std::string>& top_names) {
  RETURN_IF_ERROR(CheckId(id));
  for (const std::string& name : top_names) {
    if (absl::StartsWith(name, "..") || name.empty() ||
        name.find('/') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", name,
                       "' cannot be a top-level name: names beginning with "
                       "\"..\" are the layout's"));
    }
  }
  const std::string staged = JoinPath(dir_, absl::StrCat(kStaging, id));
  if (IsDirectory(staged)) {
    if (Has(id)) {
      RETURN_IF_ERROR(RemoveRecursively(staged));
    } else {
      RETURN_IF_ERROR(Rename(staged, PathOf(id)));
    }
  } else if (!Has(id)) {
    return absl::FailedPreconditionError(
        absl::StrCat("no version '", id, "' was staged"));
  }
  RETURN_IF_ERROR(ReplaceSymlink(std::string(kData), absl::StrCat("..", id)));
  RETURN_IF_ERROR(RelinkTopLevel(top_names));
  RETURN_IF_ERROR(FsyncDir(dir_));
  previous_ = std::exchange(current_, std::string(id));
  return absl::OkStatus();
}

}  // namespace verity
