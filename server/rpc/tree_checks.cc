// Implements CheckStoredTree.

#include "server/rpc/tree_checks.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/tree_manifest.h"

namespace verity::server {

absl::Status CheckStoredTree(const Store& store, absl::string_view manifest) {
  ASSIGN_OR_RETURN(const TreeManifest tree, ParseTreeManifest(manifest));
  for (const TreeEntry& entry : tree.entries) {
    if (entry.type != TreeEntryType::kFile) continue;
    const absl::StatusOr<BlobInfo> info = store.Stat(entry.digest);
    if (absl::IsNotFound(info.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tree entry \"", entry.path, "\": blob ", entry.digest.ToString(),
          " is not stored (put a tree's files before its manifest)"));
    }
    RETURN_IF_ERROR(info.status());
    if (info->descriptor.data_size != entry.size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tree entry \"", entry.path, "\" says ", entry.size, " bytes; blob ",
          entry.digest.ToString(), " has ", info->descriptor.data_size));
    }
  }
  return absl::OkStatus();
}

}  // namespace verity::server
