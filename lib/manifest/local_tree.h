// A tree on local disk: a folder scanned into tree entries, and a tree's
// directories, symlinks and files made beneath a new folder. Nothing here
// follows a symlink inside a tree: every path is opened name by name with
// O_NOFOLLOW, so a symlink in a folder is neither read nor written through.

#ifndef VERITYD_LIB_MANIFEST_LOCAL_TREE_H_
#define VERITYD_LIB_MANIFEST_LOCAL_TREE_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/file_util.h"
#include "lib/manifest/tree_manifest.h"
#include "lib/tree/merkle_params.h"

namespace verity {

// The blob parameters of a tree's files: 4096-byte blocks, no salt (the
// manifest records each file's hash algorithm and digest, not these).
MerkleParams TreeFileParams(HashAlgorithm algorithm);

// The tree beneath the folder `root` (not itself an entry), in canonical
// order: its directories, regular files (hashed with TreeFileParams(
// `algorithm`), `threads` files at a time) and symlinks. INVALID_ARGUMENT,
// naming the path, for anything else (a device, a FIFO, a socket) and for
// what a manifest refuses (EncodeTreeManifest's rules and limits); ABORTED
// if a file shrinks while it is hashed.
absl::StatusOr<std::vector<TreeEntry>> ScanFolder(const std::string& root,
                                                  HashAlgorithm algorithm,
                                                  int threads);

// Opens the tree path `path` beneath the directory open as `root_fd`,
// following no symlink (O_NOFOLLOW at every name): FAILED_PRECONDITION if a
// name on the way is a symlink or not a directory, NOT_FOUND if absent.
absl::StatusOr<UniqueFd> OpenBeneath(int root_fd, absl::string_view path,
                                     int flags, mode_t mode = 0);

// Makes the directories (0755) and symlinks of `entries`, in their order
// (canonical: parents first), beneath the empty directory `root_fd`.
absl::Status MakeDirectoriesAndSymlinks(int root_fd,
                                        const std::vector<TreeEntry>& entries);

// Creates the file `entry` beneath `root_fd`, where it must not exist (mode
// 0755 if executable, else 0644, less the umask), open for writing.
absl::StatusOr<UniqueFd> CreateTreeFile(int root_fd, const TreeEntry& entry);

// Hard-links the file `entry` from beneath `from_fd` to the same path
// beneath `to_fd` if at `from_fd` it is a regular file with the entry's
// size, executable bit and (unless `known_same`) digest, which it hashes;
// true if it did. False if not (absent, another type or content), or if the
// file was replaced meanwhile. `known_same`: the caller knows the content
// (a version it verified and wrote itself), so it is not hashed again.
absl::StatusOr<bool> LinkIfSame(int from_fd, int to_fd, const TreeEntry& entry,
                                bool known_same = false);

// Copies the file `from` beneath `root_fd` to the new file `to` there.
absl::Status CopyTreeFile(int root_fd, const TreeEntry& from,
                          const TreeEntry& to);

}  // namespace verity

#endif  // VERITYD_LIB_MANIFEST_LOCAL_TREE_H_
