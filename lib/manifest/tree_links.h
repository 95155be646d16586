// Whether a tree's symlinks stay inside it, checked in time linear in the
// tree's size: each symlink is resolved once (memoised, with a mark that
// catches a cycle), and each name of a target costs one hash lookup, however
// long the path it lies on.

#ifndef VERITYD_LIB_MANIFEST_TREE_LINKS_H_
#define VERITYD_LIB_MANIFEST_TREE_LINKS_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "lib/manifest/tree_entry.h"

namespace verity {

// Why a symlink fails the check.
enum class LinkFault {
  kLeavesTree,      // resolved, it goes above the tree's root
  kTooManySymlinks  // more than kMaxSymlinkHops links followed, or a cycle
};

struct BadLink {
  size_t entry = 0;  // the index of the symlink in `entries`
  LinkFault fault = LinkFault::kLeavesTree;
};

// The first symlink of `entries` whose target, resolved name by name from
// the link's folder (following the tree's symlinks met on the way, the last
// name included, at most kMaxSymlinkHops in all), leaves the tree; nullopt if
// none does. `entries` must be sorted by path, each parent a directory
// listed before what it holds (ParseTreeManifest's other rules). A name the
// tree does not hold is taken as it is written ("missing/.." is where
// "missing" was): a target may name nothing. O(entries + bytes of paths and
// targets).
std::optional<BadLink> FindEscapingLink(const std::vector<TreeEntry>& entries);

}  // namespace verity

#endif  // VERITYD_LIB_MANIFEST_TREE_LINKS_H_
