// A tree manifest as a file system shows it: inodes numbered from 1 (the
// root, as FUSE numbers it) in manifest order, each with its parent and, for
// a directory, its children in name order, found by name in O(log n).
//
// Immutable once built: thread-safe for any number of readers. Owns the
// manifest it was built from.

#ifndef VERITYD_LIB_MANIFEST_TREE_INDEX_H_
#define VERITYD_LIB_MANIFEST_TREE_INDEX_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "lib/manifest/tree_manifest.h"

namespace verity {

class TreeIndex {
 public:
  static constexpr uint64_t kRootInode = 1;

  struct Node {
    uint64_t parent = kRootInode;  // the root is its own parent
    // The manifest's entry; nullptr for the root, a directory.
    const TreeEntry* entry = nullptr;
    absl::string_view name;          // the last path component; "" for root
    std::vector<uint64_t> children;  // directories: by name (bytes)

    bool is_directory() const {
      return entry == nullptr || entry->type == TreeEntryType::kDirectory;
    }
  };

  // The index of a manifest ParseTreeManifest() accepted (sorted, each
  // parent listed before what it holds; what it did not check, such as a
  // parent that is not a directory, is skipped, never indexed).
  static TreeIndex Build(TreeManifest manifest);

  TreeIndex(TreeIndex&&) = default;
  TreeIndex& operator=(TreeIndex&&) = default;

  // The inode `inode`; nullptr if there is none.
  const Node* Find(uint64_t inode) const;
  // The child `name` of the directory `parent`, if there is one.
  std::optional<uint64_t> Lookup(uint64_t parent, absl::string_view name) const;
  // Inodes, the root included.
  uint64_t size() const { return nodes_.size(); }
  // What it was built from: Node::entry points into its entries.
  const TreeManifest& manifest() const { return manifest_; }

 private:
  TreeIndex() = default;

  TreeManifest manifest_;
  std::vector<Node> nodes_;  // nodes_[i] is inode i + 1
};

}  // namespace verity

#endif  // VERITYD_LIB_MANIFEST_TREE_INDEX_H_
