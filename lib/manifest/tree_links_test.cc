// FindEscapingLink: the cases by hand, then random trees against a resolver
// written the plain way (a path of names, each link expanded where it is met,
// at most kMaxSymlinkHops in all), which takes exponential time on the trees
// the linear one is made for but agrees with it on small ones.

#include "lib/manifest/tree_links.h"

#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace verity {
namespace {

TreeEntry Dir(std::string path) {
  return TreeEntry::Directory(std::move(path));
}
TreeEntry File(std::string path) {
  return TreeEntry::File(std::move(path), {}, 0);
}
TreeEntry Link(std::string path, std::string target) {
  return TreeEntry::Symlink(std::move(path), std::move(target));
}

std::optional<LinkFault> FaultOf(const std::vector<TreeEntry>& entries) {
  const std::optional<BadLink> bad = FindEscapingLink(entries);
  if (!bad.has_value()) return std::nullopt;
  return bad->fault;
}

TEST(TreeLinksTest, InsideAndOutside) {
  EXPECT_EQ(FaultOf({Dir("a"), Link("a/l", "../b"), File("b")}), std::nullopt);
  EXPECT_EQ(FaultOf({Link("l", "missing/../x")}), std::nullopt);
  EXPECT_EQ(FaultOf({Link("l", "./././x//y")}), std::nullopt);
  EXPECT_EQ(FaultOf({Link("l", "..")}), LinkFault::kLeavesTree);
  EXPECT_EQ(FaultOf({Link("l", "missing/../..")}), LinkFault::kLeavesTree);
  // Through a file: lexically, "f/.." is where f is.
  EXPECT_EQ(FaultOf({File("f"), Link("l", "f/x/../..")}), std::nullopt);
  EXPECT_EQ(FaultOf({File("f"), Link("l", "f/../..")}), LinkFault::kLeavesTree);
}

TEST(TreeLinksTest, LinksAreFollowedWhereTheyAreMet) {
  // d/up is the root: "d/up/.." is above it.
  EXPECT_EQ(FaultOf({Dir("d"), Link("d/up", ".."), Link("ok", "d/up/d")}),
            std::nullopt);
  const std::optional<BadLink> bad =
      FindEscapingLink({Dir("d"), Link("d/up", ".."), Link("x", "d/up/..")});
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->entry, 2u);
  EXPECT_EQ(bad->fault, LinkFault::kLeavesTree);
  // The last name too: what a link names must be inside.
  EXPECT_EQ(FaultOf({Dir("d"), Link("d/up", ".."), Link("d/x", "up/..")}),
            LinkFault::kLeavesTree);
}

TEST(TreeLinksTest, CyclesAndLongChains) {
  EXPECT_EQ(FaultOf({Link("a", "b"), Link("b", "a")}),
            LinkFault::kTooManySymlinks);
  EXPECT_EQ(FaultOf({Link("a", "a")}), LinkFault::kTooManySymlinks);
  // A chain of kMaxSymlinkHops links is allowed; one more is not.
  std::vector<TreeEntry> chain = {Link("l00", "missing")};
  for (int i = 1; i <= kMaxSymlinkHops; ++i) {
    chain.push_back(Link(absl::StrCat("l", i < 10 ? "0" : "", i),
                         absl::StrCat("l", i - 1 < 10 ? "0" : "", i - 1)));
  }
  EXPECT_EQ(FaultOf(chain), std::nullopt);
  chain.push_back(Link("l41", "l40"));
  EXPECT_EQ(FaultOf(chain), LinkFault::kTooManySymlinks);
  // A link met twice counts twice: 21 + 21 hops.
  std::vector<TreeEntry> twice = {Link("l00", "missing")};
  for (int i = 1; i <= 20; ++i) {
    twice.push_back(Link(absl::StrCat("l", i < 10 ? "0" : "", i),
                         absl::StrCat("l", i - 1 < 10 ? "0" : "", i - 1)));
  }
  EXPECT_EQ(FaultOf(twice), std::nullopt);
  twice.push_back(Link("x", "l20/../l20"));
  EXPECT_EQ(FaultOf(twice), LinkFault::kTooManySymlinks);
}

// The plain resolver: the path as names, each link's target walked again
// wherever it is met.
class PlainResolver {
 public:
  explicit PlainResolver(const std::vector<TreeEntry>& entries) {
    for (const TreeEntry& e : entries) {
      if (e.type == TreeEntryType::kSymlink) links_[e.path] = e.target;
    }
  }
  std::optional<LinkFault> Check(const std::string& path) {
    std::vector<std::string> at = absl::StrSplit(path, '/');
    at.pop_back();
    int hops = 0;
    if (Resolve(links_[path], &at, &hops)) return std::nullopt;
    return hops > kMaxSymlinkHops ? LinkFault::kTooManySymlinks
                                  : LinkFault::kLeavesTree;
  }

 private:
  bool Resolve(const std::string& target, std::vector<std::string>* at,
               int* hops) {
    for (absl::string_view name : absl::StrSplit(target, '/')) {
      if (name.empty() || name == ".") continue;
      if (name == "..") {
        if (at->empty()) return false;
        at->pop_back();
        continue;
      }
      at->emplace_back(name);
      const auto link = links_.find(absl::StrJoin(*at, "/"));
      if (link == links_.end()) continue;
      if (++*hops > kMaxSymlinkHops) return false;
      at->pop_back();
      if (!Resolve(link->second, at, hops)) return false;
    }
    return true;
  }

  absl::flat_hash_map<std::string, std::string> links_;
};

// A random tree of a few folders, files and links among them, each link's
// target a random walk of names that exist, names that do not, and "..".
std::vector<TreeEntry> RandomTree(std::mt19937& random) {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  std::vector<std::string> folders = {""};
  std::vector<TreeEntry> entries;
  absl::flat_hash_map<std::string, bool> used;
  const int count = 2 + random() % 10;
  for (int i = 0; i < count; ++i) {
    const std::string& folder = folders[random() % folders.size()];
    const std::string path = absl::StrCat(folder, folder.empty() ? "" : "/",
                                          names[random() % names.size()]);
    if (used[path]) continue;
    used[path] = true;
    switch (random() % 3) {
      case 0:
        entries.push_back(Dir(path));
        folders.push_back(path);
        break;
      case 1:
        entries.push_back(File(path));
        break;
      default: {
        std::vector<std::string> steps;
        const int length = 1 + random() % 4;
        for (int s = 0; s < length; ++s) {
          const int pick = random() % 6;
          steps.push_back(pick < 4 ? names[pick] : pick == 4 ? ".." : "x");
        }
        entries.push_back(Link(path, absl::StrJoin(steps, "/")));
      }
    }
  }
  std::sort(
      entries.begin(), entries.end(),
      [](const TreeEntry& x, const TreeEntry& y) { return x.path < y.path; });
  return entries;
}

TEST(TreeLinksTest, AgreesWithThePlainResolverOnRandomTrees) {
  std::mt19937 random(41);
  int faults = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::vector<TreeEntry> entries = RandomTree(random);
    PlainResolver plain(entries);
    std::optional<BadLink> want;
    for (size_t i = 0; i < entries.size() && !want.has_value(); ++i) {
      if (entries[i].type != TreeEntryType::kSymlink) continue;
      if (const std::optional<LinkFault> fault = plain.Check(entries[i].path)) {
        want = BadLink{i, *fault};
      }
    }
    const std::optional<BadLink> got = FindEscapingLink(entries);
    ASSERT_EQ(got.has_value(), want.has_value()) << round;
    if (!want.has_value()) continue;
    ++faults;
    EXPECT_EQ(got->entry, want->entry) << round;
    EXPECT_EQ(got->fault, want->fault) << round;
  }
  // Both kinds of tree were met.
  EXPECT_GT(faults, 1000);
  EXPECT_LT(faults, 19000);
}

}  // namespace
}  // namespace verity
