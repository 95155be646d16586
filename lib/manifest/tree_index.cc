#include "lib/manifest/tree_index.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace verity {

TreeIndex TreeIndex::Build(TreeManifest manifest) {
  TreeIndex index;
  index.manifest_ = std::move(manifest);
  index.nodes_.reserve(index.manifest_.entries.size() + 1);
  index.nodes_.emplace_back();  // the root
  // Directories by path, to find each entry's parent: the manifest lists a
  // parent before what it holds.
  absl::flat_hash_map<absl::string_view, uint64_t> directories;
  directories[""] = kRootInode;
  for (const TreeEntry& entry : index.manifest_.entries) {
    const absl::string_view path = entry.path;
    const size_t slash = path.rfind('/');
    const absl::string_view parent_path =
        slash == absl::string_view::npos ? "" : path.substr(0, slash);
    const auto parent = directories.find(parent_path);
    if (parent == directories.end()) continue;
    Node node;
    node.parent = parent->second;
    node.entry = &entry;
    node.name =
        slash == absl::string_view::npos ? path : path.substr(slash + 1);
    index.nodes_.push_back(std::move(node));
    const uint64_t inode = index.nodes_.size();
    // Sorted by path bytes, siblings come in name order: "P/x" < "P/y" iff
    // x < y.
    index.nodes_[parent->second - 1].children.push_back(inode);
    if (entry.type == TreeEntryType::kDirectory) directories[path] = inode;
  }
  return index;
}

const TreeIndex::Node* TreeIndex::Find(uint64_t inode) const {
  if (inode < kRootInode || inode > nodes_.size()) return nullptr;
  return &nodes_[inode - 1];
}

std::optional<uint64_t> TreeIndex::Lookup(uint64_t parent,
                                          absl::string_view name) const {
  const Node* dir = Find(parent);
  if (dir == nullptr) return std::nullopt;
  const auto it =
      std::lower_bound(dir->children.begin(), dir->children.end(), name,
                       [this](uint64_t child, absl::string_view n) {
                         return nodes_[child - 1].name < n;
                       });
  if (it == dir->children.end() || nodes_[*it - 1].name != name) {
    return std::nullopt;
  }
  return *it;
}

}  // namespace verity
