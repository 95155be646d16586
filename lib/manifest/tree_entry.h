// One entry of a directory tree (a file, a directory or a symlink) and the
// limits a tree keeps: the vocabulary shared by the tree manifest's encoding
// (tree_manifest.h) and the check of its symlinks (tree_links.h).

#ifndef VERITYD_LIB_MANIFEST_TREE_ENTRY_H_
#define VERITYD_LIB_MANIFEST_TREE_ENTRY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "lib/tree/descriptor.h"

namespace verity {

// Limits a manifest must keep, refused beyond (INVALID_ARGUMENT): what a
// client holds in memory to check a tree, and what it creates on disk.
inline constexpr size_t kMaxTreeEntries = size_t{1} << 20;
inline constexpr size_t kMaxTreeManifestBytes = size_t{128} << 20;
// A path's and a symlink target's bytes (PATH_MAX), and a name's (NAME_MAX).
inline constexpr size_t kMaxTreePathBytes = 4096;
inline constexpr size_t kMaxTreeNameBytes = 255;
// Symlinks followed in resolving one target, as Linux's MAXSYMLINKS.
inline constexpr int kMaxSymlinkHops = 40;

enum class TreeEntryType : uint8_t { kFile = 1, kDirectory = 2, kSymlink = 3 };

struct TreeEntry {
  // Relative, '/'-separated: no leading or trailing '/', no empty, "." or
  // ".." component, no NUL.
  std::string path;
  TreeEntryType type = TreeEntryType::kFile;
  // Files: their blob (the fs-verity digest of their content), its size, and
  // whether the file is executable (mode 0755, else 0644). Directories are
  // 0755.
  ParsedDigest digest;
  uint64_t size = 0;
  bool executable = false;
  // Symlinks: the target, relative to the link's folder, at most
  // kMaxTreePathBytes, no NUL. Resolved name by name from the link's folder,
  // following the tree's own symlinks met on the way (at most
  // kMaxSymlinkHops), it never leaves the tree's root; it may name nothing.
  std::string target;

  static TreeEntry File(std::string path, ParsedDigest digest, uint64_t size,
                        bool executable = false) {
    TreeEntry entry;
    entry.path = std::move(path);
    entry.digest = std::move(digest);
    entry.size = size;
    entry.executable = executable;
    return entry;
  }
  static TreeEntry Directory(std::string path) {
    TreeEntry entry;
    entry.path = std::move(path);
    entry.type = TreeEntryType::kDirectory;
    return entry;
  }
  static TreeEntry Symlink(std::string path, std::string target) {
    TreeEntry entry;
    entry.path = std::move(path);
    entry.type = TreeEntryType::kSymlink;
    entry.target = std::move(target);
    return entry;
  }

  friend bool operator==(const TreeEntry& a, const TreeEntry& b) {
    return a.path == b.path && a.type == b.type && a.digest == b.digest &&
           a.size == b.size && a.executable == b.executable &&
           a.target == b.target;
  }
};

}  // namespace verity

#endif  // VERITYD_LIB_MANIFEST_TREE_ENTRY_H_
