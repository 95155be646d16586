// A folder that readers use while its content is replaced, in the layout of
// the kubelet's atomic writer (what `verity sync` keeps):
//
//   DIR/..data           -> ..<id>, one symlink, renamed over to switch
//   DIR/..<id>/          a version's tree, never changed once switched to
//   DIR/..staging-<id>/  a version being written, not yet switched to
//   DIR/..tmp-<n>        a symlink being made, renamed over its name
//   DIR/<name>           -> ..data/<name>, for each top-level name of the
//                        current version
//
// A reader opens DIR/<name>/...: every path resolves through ..data into one
// version, old or new, never a mix. Names beginning with ".." are the
// layout's (a version whose top-level names begin so is refused before it
// is staged), and so are files a caller writes there (WriteFile).
//
// A switch has one commit point, the rename of ..data, and one replay:
// Repair makes the top-level links those of the version ..data points at,
// whatever a crash or an error left (it runs at Open and before each
// attempt). Every step is relative to DIR's descriptor, held open, so DIR
// is the folder checked at Open however its path changes.

#ifndef VERITYD_LIB_MANIFEST_VERSIONED_FOLDER_H_
#define VERITYD_LIB_MANIFEST_VERSIONED_FOLDER_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/file_util.h"

namespace verity {

// Thread-compatible. Holds DIR locked (flock) while it lives: one writer
// per DIR.
class VersionedFolder {
 public:
  // Opens `dir` (made 0755 if absent), locks it and repairs a switch left
  // half done. FAILED_PRECONDITION, saying which, if `dir` is a symlink, is
  // owned by another user or writable by group or others, is locked by
  // another process, or holds anything but this layout (a file the app put
  // there would be shadowed).
  static absl::StatusOr<VersionedFolder> Open(const std::string& dir);

  VersionedFolder(VersionedFolder&&) = default;
  VersionedFolder& operator=(VersionedFolder&&) = default;

  // The id of the version whose digest prints as `digest` ("sha256:<hex>"):
  // "sha256-<hex>", a plain name (the folder ..sha256-<hex>).
  static std::string IdOf(absl::string_view digest);

  // INVALID_ARGUMENT, naming it, for a top-level name the layout cannot
  // show: empty, with a '/', or beginning with ".." (the layout's). Checked
  // before anything is staged.
  static absl::Status CheckTopNames(const std::vector<std::string>& names);

  // The version ..data points at, as read at Open or the last Repair or
  // Switch; empty if none yet.
  const std::string& current() const { return current_; }
  // True if this object staged and switched to the version `id`: what it
  // holds was written in this process.
  bool Wrote(absl::string_view id) const { return wrote_.count(id) > 0; }

  // DIR's descriptor, and the path of DIR/..<id> (for messages, and for the
  // app's hook).
  int fd() const { return dir_fd_.get(); }
  const std::string& path() const { return dir_; }
  std::string PathOf(absl::string_view id) const;
  // DIR/..<id>, open (O_NOFOLLOW); NOT_FOUND if there is none.
  absl::StatusOr<UniqueFd> OpenVersion(absl::string_view id) const;

  // Reads ..data again and makes the top-level links those of the version
  // it points at: a link for each name the version's folder holds, none for
  // others, no ..tmp- link left. Idempotent. FAILED_PRECONDITION if ..data
  // points at no version or DIR holds something not of the layout.
  absl::Status Repair();

  // A new empty folder to write the version `id` into, 0755 (a leftover of
  // an earlier attempt removed first), open. INVALID_ARGUMENT unless `id` is
  // a plain name of [0-9a-z._-] not beginning with "staging-" or "tmp-".
  absl::StatusOr<UniqueFd> Stage(absl::string_view id);
  // Removes what Stage made for `id`.
  absl::Status Discard(absl::string_view id);

  // Makes the staged `id` current: its folder becomes DIR/..<id> (one that
  // is there already, which this process did not write, is replaced by it),
  // ..data is renamed to point at it (the commit point), then Repair's
  // relinking. Removes nothing else: readers see the new version as soon as
  // ..data is renamed. FAILED_PRECONDITION if nothing was staged for `id`
  // and this process did not write it before.
  absl::Status Switch(absl::string_view id);

  // Removes every version but the current one and the one the last Switch
  // replaced (kept for readers still inside it), and what failed attempts
  // left. After Open and before any Switch, keeps only the current one.
  absl::Status Prune();

  // Replaces DIR/`name` (a name beginning with "..", not a version's) by a
  // file holding `contents`, atomically and durably.
  absl::Status WriteFile(absl::string_view name, absl::string_view contents);

 private:
  VersionedFolder(std::string dir, UniqueFd fd)
      : dir_(std::move(dir)), dir_fd_(std::move(fd)) {}

  // Points the symlink `name` in DIR at `target`, by a ..tmp- link renamed
  // over it.
  absl::Status ReplaceSymlink(const std::string& name,
                              const std::string& target);
  // The version ..data points at now; empty if there is no ..data.
  absl::StatusOr<std::string> ReadCurrent() const;
  absl::Status Relink();
  std::string TempName() { return "..tmp-" + std::to_string(temps_++); }

  std::string dir_;
  UniqueFd dir_fd_;  // flock'd
  std::string current_;
  std::string previous_;  // what the last Switch replaced
  std::set<std::string, std::less<>> wrote_;
  uint64_t temps_ = 0;
};

}  // namespace verity

#endif  // VERITYD_LIB_MANIFEST_VERSIONED_FOLDER_H_
