// TreeIndex: inodes for every entry of a parsed manifest, each under its
// parent, children found by name (siblings whose names sort around '/'
// included), nothing for unknown inodes or names.

#include "lib/manifest/tree_index.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace verity {
namespace {

TreeEntry Entry(std::string path, TreeEntryType type) {
  TreeEntry entry;
  entry.path = std::move(path);
  entry.type = type;
  if (type == TreeEntryType::kFile) {
    entry.digest.algorithm = HashAlgorithm::kSha256;
    entry.digest.digest = std::string(32, 'd');
    entry.size = 7;
  }
  if (type == TreeEntryType::kSymlink) entry.target = "a";
  return entry;
}

TreeIndex IndexOf(std::vector<TreeEntry> entries) {
  absl::StatusOr<std::string> bytes = EncodeTreeManifest(std::move(entries));
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<TreeManifest> manifest = ParseTreeManifest(*bytes);
  EXPECT_TRUE(manifest.ok()) << manifest.status();
  return TreeIndex::Build(*std::move(manifest));
}

std::string PathOf(const TreeIndex& index, uint64_t inode) {
  const TreeIndex::Node* node = index.Find(inode);
  return node == nullptr || node->entry == nullptr ? "" : node->entry->path;
}

TEST(TreeIndexTest, EveryEntryUnderItsParentFoundByName) {
  const TreeIndex index = IndexOf({
      Entry("a", TreeEntryType::kDirectory),
      Entry("a/x", TreeEntryType::kFile),
      Entry("a/x.d", TreeEntryType::kDirectory),
      Entry("a/x.d/deep", TreeEntryType::kFile),
      Entry("a-b", TreeEntryType::kFile),
      Entry("a.link", TreeEntryType::kSymlink),
      Entry("a/ab", TreeEntryType::kFile),
      Entry("empty", TreeEntryType::kDirectory),
  });
  EXPECT_EQ(index.size(), 9u);
  const TreeIndex::Node* root = index.Find(TreeIndex::kRootInode);
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->is_directory());
  EXPECT_EQ(root->parent, TreeIndex::kRootInode);
  std::vector<std::string> top;
  for (uint64_t child : root->children) top.push_back(PathOf(index, child));
  EXPECT_EQ(top, (std::vector<std::string>{"a", "a-b", "a.link", "empty"}));

  const std::optional<uint64_t> a = index.Lookup(TreeIndex::kRootInode, "a");
  ASSERT_TRUE(a.has_value());
  std::vector<std::string> in_a;
  for (uint64_t child : index.Find(*a)->children) {
    in_a.push_back(std::string(index.Find(child)->name));
    EXPECT_EQ(index.Find(child)->parent, *a);
  }
  EXPECT_EQ(in_a, (std::vector<std::string>{"ab", "x", "x.d"}));
  for (const char* name : {"ab", "x", "x.d"}) {
    const std::optional<uint64_t> child = index.Lookup(*a, name);
    ASSERT_TRUE(child.has_value()) << name;
    EXPECT_EQ(PathOf(index, *child), std::string("a/") + name);
  }
  const std::optional<uint64_t> xd = index.Lookup(*a, "x.d");
  const std::optional<uint64_t> deep = index.Lookup(*xd, "deep");
  ASSERT_TRUE(deep.has_value());
  EXPECT_FALSE(index.Find(*deep)->is_directory());
  EXPECT_EQ(index.Find(*deep)->entry->size, 7u);
  EXPECT_TRUE(index.Find(*index.Lookup(TreeIndex::kRootInode, "empty"))
                  ->children.empty());
}

TEST(TreeIndexTest, NothingForUnknownInodesAndNames) {
  const TreeIndex index = IndexOf({Entry("f", TreeEntryType::kFile)});
  EXPECT_EQ(index.Find(0), nullptr);
  EXPECT_EQ(index.Find(3), nullptr);
  EXPECT_FALSE(index.Lookup(TreeIndex::kRootInode, "g").has_value());
  EXPECT_FALSE(index.Lookup(TreeIndex::kRootInode, "").has_value());
  EXPECT_FALSE(index.Lookup(99, "f").has_value());
  const std::optional<uint64_t> f = index.Lookup(TreeIndex::kRootInode, "f");
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(index.Lookup(*f, "f").has_value());  // a file has no children
  const TreeIndex empty = IndexOf({});
  EXPECT_EQ(empty.size(), 1u);
  EXPECT_TRUE(empty.Find(TreeIndex::kRootInode)->children.empty());
}

}  // namespace
}  // namespace verity
