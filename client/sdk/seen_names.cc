// Implements SeenNamesStore: flock, read, check, replace durably.

#include "client/sdk/seen_names.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/sdk/seen_names_file.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"

namespace verity::client {
namespace {

// The file's records; none if it does not exist yet.
absl::StatusOr<SeenNames> Load(const std::string& path,
                               const std::string& key_id) {
  absl::StatusOr<std::string> text =
      ReadSmallRegularFile(path, kMaxSeenNamesFileBytes);
  if (absl::IsNotFound(text.status())) return SeenNames{key_id, {}};
  if (absl::IsOutOfRange(text.status())) {
    return absl::DataLossError(
        absl::StrCat("the state file ", path, " is larger than it can be"));
  }
  RETURN_IF_ERROR(text.status());
  absl::StatusOr<SeenNames> seen = ParseSeenNames(*text);
  if (seen.ok() && seen->key_id != key_id) {
    seen = absl::DataLossError("it belongs to another key");
  }
  if (!seen.ok()) {
    return absl::DataLossError(absl::StrCat(
        "the state file ", path, " is damaged (", seen.status().message(),
        "); remove it to start over, forgetting the name versions seen"));
  }
  return seen;
}

const char* Prefix(SeenNamesKind kind) {
  return kind == SeenNamesKind::kSigned ? "signed-" : "names-";
}

// mkdir -p with mode 0700, as the XDG spec asks of state directories.
absl::Status MakePrivateDirs(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0700) != 0 &&
        errno != EEXIST) {
      return ErrnoStatus(errno, "mkdir", prefix);
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

}  // namespace

absl::Status MakeStateDir(const std::string& dir) {
  RETURN_IF_ERROR(MakePrivateDirs(dir));
  return CheckOwnDirectory(dir, /*absent_ok=*/false);
}

absl::StatusOr<UniqueFd> LockExclusive(const std::string& lock_path) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenLockFile(lock_path));
  while (flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoStatus(errno, "flock", lock_path);
  }
  return fd;
}

absl::StatusOr<std::string> DefaultStateDir() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') {
    return JoinPath(state, "verity");
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') {
    return JoinPath(home, ".local/state/verity");
  }
  return absl::FailedPreconditionError(
      "no state directory for the name versions seen: set state_dir "
      "(--state-dir), XDG_STATE_HOME or HOME");
}

SeenNamesStore::SeenNamesStore(std::string dir, SeenNamesKind kind,
                               std::string key_id)
    : dir_(std::move(dir)),
      key_id_(std::move(key_id)),
      path_(JoinPath(dir_, absl::StrCat(Prefix(kind), key_id_, ".seen"))),
      lock_path_(JoinPath(dir_, absl::StrCat(Prefix(kind), key_id_, ".lock"))) {
}

absl::Status SeenNamesStore::CheckAndRecord(absl::string_view name,
                                            const NameStatement& next) const {
  RETURN_IF_ERROR(MakeStateDir(dir_));
  ASSIGN_OR_RETURN(const UniqueFd lock, LockExclusive(lock_path_));
  ASSIGN_OR_RETURN(SeenNames seen, Load(path_, key_id_));
  const auto it = seen.names.find(name);
  if (it != seen.names.end()) {
    RETURN_IF_ERROR(CheckNotRolledBack(it->second, next));
    // The same statement again: nothing to record.
    if (it->second.version == next.claim.version) return absl::OkStatus();
  }
  seen.names[std::string(name)] = SeenNameOf(next);
  ASSIGN_OR_RETURN(const std::string text, FormatSeenNames(seen));
  return ReplaceFileDurably(absl::StrCat(path_, ".tmp"), path_, text);
}

absl::StatusOr<SeenName> SeenNamesStore::Lookup(absl::string_view name) const {
  // No lock: the file is only ever replaced whole. A directory others can
  // write into could hold any record (one that forgets a version seen).
  RETURN_IF_ERROR(CheckOwnDirectory(dir_, /*absent_ok=*/true));
  ASSIGN_OR_RETURN(const SeenNames seen, Load(path_, key_id_));
  const auto it = seen.names.find(name);
  return it == seen.names.end() ? SeenName{} : it->second;
}

}  // namespace verity::client
