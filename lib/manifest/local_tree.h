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

// How the files of a tree are made beneath a folder, and which files found
// on disk may become its files. Plain value.
struct TreeFileModes {
  // 0444 (0555 if executable) instead of 0644 (0755): verity sync's versions
  // share inodes, so that none is written in place, where an edit would flow
  // into the next version unnoticed.
  bool read_only = false;
  // A file found on disk is adopted (hard-linked in) only if it has exactly
  // one link, so that no other name can change what was verified (`verity
  // get -o DIR`); verity sync's versions share theirs (false there).
  bool single_link = true;
};

// The mode of the file `entry` under `modes`: exactly this, whatever the
// umask.
mode_t TreeFileMode(const TreeEntry& entry, const TreeFileModes& modes);

// Creates the file `entry` beneath `folders`' root, where it must not exist,
// with TreeFileMode, open for reading and writing.
absl::StatusOr<UniqueFd> CreateTreeFile(TreeFolders& folders,
                                        const TreeEntry& entry,
                                        const TreeFileModes& modes);
// The same beneath the directory open as `root_fd`.
absl::StatusOr<UniqueFd> CreateTreeFile(int root_fd, const TreeEntry& entry,
                                        const TreeFileModes& modes);

// How ReuseFile gave a tree a file it found.
enum class Reused {
  kNo,      // absent, of another type or size, or of other content
  kLinked,  // its inode, hard-linked
  kCopied,  // a copy (a reflink where the file system has them), hashed
};

// Gives the tree beneath `to`'s root the file `entry` from the same path
// beneath `from`'s root, if the file there holds the entry's content. Its
// inode is adopted (hard-linked) only if this user owns it, its mode is
// exactly TreeFileMode and, with modes.single_link, it has one link; its
// content is hashed first, unless `known_same` (the caller wrote it and
// nothing else did: sync's version before, in the same process). Any other
// file of the entry's size is copied and the copy hashed: what lands in the
// tree is verified, whoever can write the original. A file replaced while it
// is looked at is not reused.
absl::StatusOr<Reused> ReuseFile(TreeFolders& from, TreeFolders& to,
                                 const TreeEntry& entry,
                                 const TreeFileModes& modes,
                                 bool known_same = false);
// The same from beneath the directory open as `from_fd` to `to_fd`.
absl::StatusOr<Reused> ReuseFile(int from_fd, int to_fd, const TreeEntry& entry,
                                 const TreeFileModes& modes,
                                 bool known_same = false);

// OK if the folder open as `root_fd` (`root` in messages) holds exactly the
// tree `entries`: each directory, each symlink with its target, each file of
// this user's with exactly TreeFileMode and the entry's content (hashed,
// `threads` at a time), and nothing else; DATA_LOSS naming the first path
// that differs. What `verity sync` asks of a version it did not write
// itself (OSTree's fsck).
absl::Status CheckFolderHolds(int root_fd, const std::string& root,
                              const std::vector<TreeEntry>& entries,
                              const TreeFileModes& modes, int threads);

// Copies the file `from` beneath `root_fd` to the new file `to` there, which
// has the same content, and hashes the copy: DATA_LOSS if it does not hold
// `to`'s content (the original changed since it was verified).
absl::Status CopyTreeFile(int root_fd, const TreeEntry& from,
                          const TreeEntry& to, const TreeFileModes& modes);

}  // namespace verity

#endif  // VERITYD_LIB_MANIFEST_LOCAL_TREE_H_
