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

// The folders of a tree beneath the directory open as `root_fd`, each
// opened name by name (O_NOFOLLOW) when asked for and kept open while the
// next path asked for is in it too: a tree's entries are sorted, so the
// files of a folder come together and cost one open, not one per name on
// the way. Thread-compatible: one per thread; `root_fd` must outlive it.
class TreeFolders {
 public:
  explicit TreeFolders(int root_fd) : root_fd_(root_fd) {}
  TreeFolders(const TreeFolders&) = delete;
  TreeFolders& operator=(const TreeFolders&) = delete;

  // The open folder holding the tree path `path` (valid until the next
  // call), and the path's last name in `*leaf`. INVALID_ARGUMENT for a path
  // a manifest refuses, FAILED_PRECONDITION if a name on the way is a
  // symlink or not a directory, NOT_FOUND if absent.
  absl::StatusOr<int> Holding(absl::string_view path, std::string* leaf);

 private:
  const int root_fd_;
  std::string open_path_;  // the folder open_ is, if open
  UniqueFd open_;
};

// Opens the tree path `path` beneath `folders`' root, following no symlink
// (O_NOFOLLOW at every name); errors as TreeFolders::Holding's.
absl::StatusOr<UniqueFd> OpenBeneath(TreeFolders& folders,
                                     absl::string_view path, int flags,
                                     mode_t mode = 0);
// The same beneath the directory open as `root_fd`.
absl::StatusOr<UniqueFd> OpenBeneath(int root_fd, absl::string_view path,
                                     int flags, mode_t mode = 0);

// Makes the directories (0755) and symlinks of `entries`, in their order
// (canonical: parents first), beneath the empty directory `root_fd`.
absl::Status MakeDirectoriesAndSymlinks(int root_fd,
                                        const std::vector<TreeEntry>& entries);

// Creates the file `entry` beneath `folders`' root, where it must not exist
// (mode 0755 if executable, else 0644, less the umask), open for writing.
absl::StatusOr<UniqueFd> CreateTreeFile(TreeFolders& folders,
                                        const TreeEntry& entry);
// The same beneath the directory open as `root_fd`.
absl::StatusOr<UniqueFd> CreateTreeFile(int root_fd, const TreeEntry& entry);

// Hard-links the file `entry` from beneath `from`'s root to the same path
// beneath `to`'s if at `from` it is a regular file with the entry's
// size, executable bit and (unless `known_same`) digest, which it hashes;
// true if it did. False if not (absent, another type or content), or if the
// file was replaced meanwhile. `known_same`: the caller knows the content
// (a version it verified and wrote itself), so it is not hashed again.
absl::StatusOr<bool> LinkIfSame(TreeFolders& from, TreeFolders& to,
                                const TreeEntry& entry,
                                bool known_same = false);
// The same from beneath the directory open as `from_fd` to `to_fd`.
absl::StatusOr<bool> LinkIfSame(int from_fd, int to_fd, const TreeEntry& entry,
                                bool known_same = false);

// Copies the file `from` beneath `root_fd` to the new file `to` there.
absl::Status CopyTreeFile(int root_fd, const TreeEntry& from,
                          const TreeEntry& to);

}  // namespace verity

#endif  // VERITYD_LIB_MANIFEST_LOCAL_TREE_H_
