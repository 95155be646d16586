// Directory trees: a folder stored as its files' blobs plus a tree manifest,
// one blob whose digest names the whole tree (docs/protocol.md, "Tree
// manifests"), and fetched back with every file verified against it. These
// calls are built on Client's; the same Client serves them concurrently.

#ifndef VERITYD_CLIENT_INCLUDE_VERITY_TREE_H_
#define VERITYD_CLIENT_INCLUDE_VERITY_TREE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "verity/blob_info.h"
#include "verity/client.h"
#include "verity/digest.h"
#include "verity/options.h"

namespace verity::sdk {

enum class TreeEntryType : uint8_t { kFile = 1, kDirectory = 2, kSymlink = 3 };

// One entry of a tree, in canonical order (by path bytes). Plain value.
struct TreeEntry {
  std::string path;  // relative, '/'-separated
  TreeEntryType type = TreeEntryType::kFile;
  std::optional<Digest> digest;  // files: their blob
  uint64_t size = 0;             // files
  bool executable = false;       // files: 0755, else 0644
  std::string target;            // symlinks: relative, inside the tree
};

// A folder as a tree: what ScanTree found, to sign and put. Plain value.
struct LocalTree {
  std::string folder;
  std::vector<TreeEntry> entries;
  std::string manifest;  // the encoded tree manifest
  Digest digest;         // the manifest's blob digest: names the tree
  uint64_t file_bytes = 0;
};

// Walks `folder` (following no symlink in it) and hashes every file,
// `threads` files at a time. INVALID_ARGUMENT, naming the path, for what a
// tree cannot hold (a device, a FIFO, a socket, a symlink leaving the tree)
// and over the manifest's limits.
absl::StatusOr<LocalTree> ScanTree(absl::string_view folder,
                                   DigestAlgorithm algorithm, int threads);

struct PutTreeOptions {
  // If set, the name then refers to the tree; `name_statement` is its signed
  // statement for tree.digest, as PutOptions has it.
  std::string name;
  std::string name_statement;
  // Files uploaded at a time, 1 to 64.
  int parallel = 8;
};

// Plain value.
struct PutTreeResult {
  BlobInfo info;  // of the manifest
  size_t files = 0;
  size_t blobs_sent = 0;  // the files' blobs the server lacked
  uint64_t bytes_sent = 0;
};

// Stores `tree`: asks which of its files' blobs the server lacks
// (FindMissing), uploads those, then the manifest, which the server stores
// (and names) only once every file is stored. DATA_LOSS if a file changed
// since ScanTree.
absl::StatusOr<PutTreeResult> PutTree(Client& client, const LocalTree& tree,
                                      const PutTreeOptions& options);

// The entries of the tree `digest` names, its manifest fetched and verified
// (as Fetch does) and parsed: INVALID_ARGUMENT if the blob is not a valid
// tree manifest.
absl::StatusOr<std::vector<TreeEntry>> ReadTree(Client& client,
                                                const Digest& digest,
                                                const FetchOptions& options);

struct FetchTreeOptions {
  // Priority and deadline of every fetch (the range is ignored).
  FetchOptions fetch;
  // Files fetched at a time, 1 to 64.
  int parallel = 8;
  // A folder holding an earlier version of the tree: a file at the same path
  // there with the same content, size and executable bit is taken instead of
  // fetched. Its inode is hard-linked only if this user owns it, its mode is
  // exactly the tree's and (unless read_only) it has no other link, its
  // content hashed first; any other is copied (a reflink where the file
  // system has them) and the copy hashed. Empty for none.
  std::string reuse_from;
  // The entries of the tree reuse_from holds, if the caller verified and
  // wrote it itself and nothing else writes there (verity sync's version
  // before, in the same process): a file is then taken only if that tree
  // has the same content at the same path, and an adopted one is not hashed
  // again. Empty: reuse_from is any folder, and each candidate is hashed.
  std::vector<TreeEntry> reuse_entries;
  // Files are made 0444 (0555 if executable) instead of 0644 (0755), and
  // files of reuse_from may share their inode with other folders: verity
  // sync's versions, which share unchanged files, none writable in place.
  bool read_only = false;
};

// Plain value.
struct FetchTreeResult {
  size_t files = 0;
  size_t files_fetched = 0;
  size_t files_reused = 0;  // hard-linked from reuse_from
  // Copied and verified: from reuse_from (not adoptable) or from another file
  // of the tree with the same content.
  size_t files_copied = 0;
  uint64_t bytes_fetched = 0;
};

// Writes the tree `entries` describe into `folder`, an empty directory the
// caller made: its directories and symlinks, then every file, fetched
// (verified, as Fetch does), reused or copied, then syncs the file system.
// Nothing is written outside `folder` and no symlink is followed. On failure
// `folder` holds part of the tree: the caller removes it.
// INVALID_ARGUMENT for entries that break a manifest's rules.
absl::StatusOr<FetchTreeResult> WriteTree(Client& client,
                                          const std::vector<TreeEntry>& entries,
                                          absl::string_view folder,
                                          const FetchTreeOptions& options);

// WriteTree into the empty directory open as `folder_fd` (`folder` names it
// in messages), taking files from the directory open as `reuse_fd` (-1:
// none; options.reuse_from is ignored): for a caller that holds its folders
// open, so that no path is looked up again.
absl::StatusOr<FetchTreeResult> WriteTreeAt(
    Client& client, const std::vector<TreeEntry>& entries, int folder_fd,
    absl::string_view folder, int reuse_fd, const FetchTreeOptions& options);

// OK if the directory open as `folder_fd` (`folder` in messages) holds
// exactly the tree `entries` describe, as WriteTree would write it with
// `options` (read_only: the files' modes), every file hashed
// (options.parallel at a time), nothing more; DATA_LOSS naming the first
// path that differs. For a folder written by someone else, or before a
// restart.
absl::Status VerifyFolder(int folder_fd, absl::string_view folder,
                          const std::vector<TreeEntry>& entries,
                          const FetchTreeOptions& options);

// `verity get -o DIR`: reads the tree `digest` names, writes it into a new
// folder beside `folder` (reusing files `folder` already has, unless
// options.reuse_from names another), and only when every file is verified
// puts it in `folder`'s place in one rename, removing what `folder` held.
// Every step is relative to `folder`'s parent, held open; FAILED_PRECONDITION
// if `folder` is there and not a folder (a symlink to one included).
// On failure `folder` is as it was and nothing is left beside it. A fetch
// killed midway leaves its folder, `folder`.verity-PID-XXXXXX, which the
// next FetchTree into `folder` removes.
absl::StatusOr<FetchTreeResult> FetchTree(Client& client, const Digest& digest,
                                          absl::string_view folder,
                                          const FetchTreeOptions& options);

}  // namespace verity::sdk

#endif  // VERITYD_CLIENT_INCLUDE_VERITY_TREE_H_
