// Implements FindEscapingLink: the tree as nodes (0 the root, entry i node
// i + 1) with their parents and a hash map of (folder, name) -> node, so that
// a walk steps one name at a time in O(1), and every symlink's resolution
// (where it leads, and how many links that took) remembered.

#include "lib/manifest/tree_links.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace verity {
namespace {

constexpr uint32_t kRoot = 0;
// Link counts saturate here: anything above the limit is as bad.
constexpr uint32_t kOverLimit = kMaxSymlinkHops + 1;

// Where a walk is: the node `node`, then `extra` names the tree does not
// hold beneath it (taken as written, so ".." only takes one back off).
struct Place {
  uint32_t node = kRoot;
  uint32_t extra = 0;
};

class Resolver {
 public:
  explicit Resolver(const std::vector<TreeEntry>& entries);

  // Resolves the symlink at node `link`; a fault if it fails.
  std::optional<LinkFault> Resolve(uint32_t link, uint32_t depth);

 private:
  enum class State : uint8_t { kUnresolved, kResolving, kResolved };
  struct Link {
    State state = State::kUnresolved;
    Place place;        // where it leads, once resolved
    uint32_t hops = 0;  // links followed to get there, at most kOverLimit
  };

  // Walks `target` from `*at`, adding the links it follows to `*hops`.
  std::optional<LinkFault> Walk(absl::string_view target, uint32_t depth,
                                Place* at, uint32_t* hops);
  const TreeEntry& EntryOf(uint32_t node) const { return entries_[node - 1]; }

  const std::vector<TreeEntry>& entries_;
  std::vector<uint32_t> parent_;  // by node; the root's is itself
  absl::flat_hash_map<std::pair<uint32_t, absl::string_view>, uint32_t>
      children_;
  std::vector<Link> links_;  // by node; used for symlinks only
};

Resolver::Resolver(const std::vector<TreeEntry>& entries)
    : entries_(entries),
      parent_(entries.size() + 1, kRoot),
      links_(entries.size() + 1) {
  absl::flat_hash_map<absl::string_view, uint32_t> folders;
  folders[""] = kRoot;
  children_.reserve(entries.size());
  for (uint32_t node = 1; node <= entries.size(); ++node) {
    const absl::string_view path = EntryOf(node).path;
    const size_t slash = path.rfind('/');
    const absl::string_view folder =
        slash == absl::string_view::npos ? "" : path.substr(0, slash);
    // The caller checked that it is there, a directory listed before.
    parent_[node] = folders.at(folder);
    children_[{parent_[node], path.substr(slash + 1)}] = node;
    if (EntryOf(node).type == TreeEntryType::kDirectory) folders[path] = node;
  }
}

std::optional<LinkFault> Resolver::Resolve(uint32_t link, uint32_t depth) {
  Link& state = links_[link];
  if (state.state == State::kResolved) return std::nullopt;
  // A cycle, or a chain deeper than the limit (each level is a link more).
  if (state.state == State::kResolving || depth > kMaxSymlinkHops) {
    return LinkFault::kTooManySymlinks;
  }
  state.state = State::kResolving;
  Place at{parent_[link], 0};
  uint32_t hops = 0;
  if (std::optional<LinkFault> fault =
          Walk(EntryOf(link).target, depth, &at, &hops)) {
    return fault;
  }
  state = Link{State::kResolved, at, hops};
  return std::nullopt;
}

std::optional<LinkFault> Resolver::Walk(absl::string_view target,
                                        uint32_t depth, Place* at,
                                        uint32_t* hops) {
  for (const absl::string_view name : absl::StrSplit(target, '/')) {
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      if (at->extra > 0) {
        at->extra--;
      } else if (at->node == kRoot) {
        return LinkFault::kLeavesTree;
      } else {
        at->node = parent_[at->node];
      }
      continue;
    }
    const auto child =
        at->extra == 0 ? children_.find({at->node, name}) : children_.end();
    if (child == children_.end()) {
      at->extra++;
      continue;
    }
    if (EntryOf(child->second).type != TreeEntryType::kSymlink) {
      at->node = child->second;
      continue;
    }
    if (std::optional<LinkFault> fault = Resolve(child->second, depth + 1)) {
      return fault;
    }
    const Link& followed = links_[child->second];
    *hops = std::min(kOverLimit, *hops + 1 + followed.hops);
    if (*hops > static_cast<uint32_t>(kMaxSymlinkHops)) {
      return LinkFault::kTooManySymlinks;
    }
    *at = followed.place;
  }
  return std::nullopt;
}

}  // namespace

std::optional<BadLink> FindEscapingLink(const std::vector<TreeEntry>& entries) {
  const bool any = std::any_of(
      entries.begin(), entries.end(),
      [](const TreeEntry& e) { return e.type == TreeEntryType::kSymlink; });
  if (!any) return std::nullopt;
  Resolver resolver(entries);
  for (uint32_t i = 0; i < entries.size(); ++i) {
    if (entries[i].type != TreeEntryType::kSymlink) continue;
    if (std::optional<LinkFault> fault = resolver.Resolve(i + 1, 0)) {
      return BadLink{i, *fault};
    }
  }
  return std::nullopt;
}

}  // namespace verity
