// A folder that readers use while its content is replaced, in the layout of
// the kubelet's atomic writer (what `verity sync` keeps):
//
//   DIR/..data           -> ..<id>, one symlink, renamed over to switch
//   DIR/..<id>/          a version's tree, never changed once switched to
//   DIR/..staging-<id>/  a version being written, not yet switched to
//   DIR/<name>           -> ..data/<name>, for each top-level name of the
//                        current version
//
// A reader opens DIR/<name>/...: every path resolves through ..data into one
// version, old or new, never a mix. Names beginning with ".." are the
// layout's; a version whose top-level names begin so is refused.

#ifndef VERITYD_LIB_MANIFEST_VERSIONED_FOLDER_H_
#define VERITYD_LIB_MANIFEST_VERSIONED_FOLDER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity {

// Thread-compatible: one writer per DIR (Open does not lock it).
class VersionedFolder {
 public:
  // Opens `dir`, making it if absent. FAILED_PRECONDITION if it holds
  // anything but this layout (a file the app put there would be shadowed).
  static absl::StatusOr<VersionedFolder> Open(const std::string& dir);

  // The id of the version whose digest prints as `digest` ("sha256:<hex>"):
  // "sha256-<hex>", a plain name (the folder ..sha256-<hex>).
  static std::string IdOf(absl::string_view digest);

  // The version ..data points at; empty if none yet.
  const std::string& current() const { return current_; }

  // True if the version `id` was completed (switched to) before.
  bool Has(absl::string_view id) const;
  std::string PathOf(absl::string_view id) const;  // DIR/..<id>

  // A new empty folder to write the version `id` into (a leftover of an
  // earlier attempt removed). INVALID_ARGUMENT unless `id` is a plain name
  // of [0-9a-z._-] not beginning with "staging-".
  absl::StatusOr<std::string> Stage(absl::string_view id);
  // Removes what Stage made for `id`.
  absl::Status Discard(absl::string_view id);

  // Makes `id` current: the staged folder (if any) becomes DIR/..<id>, then
  // ..data is renamed to point at it, then the top-level links are made for
  // `top_names` and removed for names no longer there. Removes nothing:
  // readers see the new version as soon as this returns.
  // INVALID_ARGUMENT for a top-level name beginning with "..".
  absl::Status Switch(absl::string_view id,
                      const std::vector<std::string>& top_names);

  // Removes every version but the current one and the one the last Switch
  // replaced (kept for readers still inside it), and what failed attempts
  // left. After Open and before any Switch, keeps only the current one.
  absl::Status Prune();

 private:
  explicit VersionedFolder(std::string dir) : dir_(std::move(dir)) {}
  absl::Status ReplaceSymlink(const std::string& name,
                              const std::string& target);
  absl::Status RelinkTopLevel(const std::vector<std::string>& top_names);

  std::string dir_;
  std::string current_;
  std::string previous_;  // what the last Switch replaced
};

}  // namespace verity

#endif  // VERITYD_LIB_MANIFEST_VERSIONED_FOLDER_H_
