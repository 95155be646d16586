// Writes a tree's files beneath a folder: what an earlier version of it
// holds is reused (lib/manifest/local_tree's ReuseFile: adopted or copied,
// and verified either way), the rest fetched and verified (small files many
// to a BatchRead, large ones alone), then each group of files with one
// content completed by verified copies of its first. verity/tree.h's
// WriteTree and FetchTree run it.

#ifndef VERITYD_CLIENT_SDK_TREE_WRITER_H_
#define VERITYD_CLIENT_SDK_TREE_WRITER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "lib/manifest/local_tree.h"
#include "verity/client.h"
#include "verity/tree.h"

namespace verity::sdk {

// The modes of the files a tree is written with under `options`: verity
// sync's read-only versions share inodes; anything else adopts only inodes
// with one link.
TreeFileModes ModesOf(const FetchTreeOptions& options);

// Writes the tree `entries` (checked: the manifest's rules) describe beneath
// the empty directory open as `root_fd` (`root` names it in messages), as
// WriteTree says, reusing from the directory open as `reuse_fd` (-1: none).
// Then syncs the file system.
absl::StatusOr<FetchTreeResult> WriteCheckedTree(
    Client& client, const std::vector<TreeEntry>& entries, int root_fd,
    absl::string_view root, int reuse_fd, const FetchTreeOptions& options);

}  // namespace verity::sdk

#endif  // VERITYD_CLIENT_SDK_TREE_WRITER_H_
