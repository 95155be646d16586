// Tree manifests: a tree encodes one way and parses back to itself; every
// rule is refused, by EncodeTreeManifest() and, on bytes made by hand, by
// ParseTreeManifest(); symlinks that leave the tree through other symlinks
// are caught.

#include "lib/manifest/tree_manifest.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace verity {
namespace {

TreeEntry File(std::string path, uint64_t size = 10, bool executable = false,
               char fill = 'a') {
  return TreeEntry::File(
      std::move(path),
      ParsedDigest{HashAlgorithm::kSha256, std::string(32, fill)}, size,
      executable);
}
TreeEntry Dir(std::string path) {
  return TreeEntry::Directory(std::move(path));
}
TreeEntry Link(std::string path, std::string target) {
  return TreeEntry::Symlink(std::move(path), std::move(target));
}

std::vector<TreeEntry> Release() {
  TreeEntry weights = File("model/weights.bin", 1 << 20);
  weights.digest.algorithm = HashAlgorithm::kSha512;
  weights.digest.digest = std::string(64, 'w');
  return {Dir("model"),
          weights,
          File("model/config.json", 300),
          File("run.sh", 40, /*executable=*/true),
          Link("latest", "model"),
          Link("model/current", "weights.bin"),
          Dir("empty"),
          File("model.d", 0)};
}

TEST(TreeManifestTest, EncodesInOneOrderAndParsesBack) {
  std::vector<TreeEntry> entries = Release();
  absl::StatusOr<std::string> bytes = EncodeTreeManifest(entries);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::reverse(entries.begin(), entries.end());
  EXPECT_EQ(*EncodeTreeManifest(entries), *bytes);
  absl::StatusOr<TreeManifest> parsed = ParseTreeManifest(*bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  std::vector<std::string> paths;
  for (const TreeEntry& entry : parsed->entries) paths.push_back(entry.path);
  // Bytes order: '.' (0x2e) sorts before '/' (0x2f).
  EXPECT_EQ(paths,
            (std::vector<std::string>{"empty", "latest", "model", "model.d",
                                      "model/config.json", "model/current",
                                      "model/weights.bin", "run.sh"}));
  EXPECT_EQ(*EncodeTreeManifest(parsed->entries), *bytes);
  std::sort(
      entries.begin(), entries.end(),
      [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
  EXPECT_EQ(parsed->entries, entries);
  EXPECT_TRUE(ParseTreeManifest(*EncodeTreeManifest({})).ok());
}

// What EncodeTreeManifest() refuses, with the words of its message.
TEST(TreeManifestTest, RefusesEveryBrokenRule) {
  TreeEntry dir_with_size = Dir("d");
  dir_with_size.size = 1;
  TreeEntry short_digest = File("f");
  short_digest.digest.digest.pop_back();
  const struct {
    std::vector<TreeEntry> entries;
    const char* words;
  } cases[] = {
      {{File("/etc/passwd")}, "absolute"},
      {{Dir("a"), File("a/../b")}, "\"..\""},
      {{Dir("a"), File("a/./b")}, "\"..\""},
      {{File("..")}, "\"..\""},
      {{Dir("a"), File("a//b")}, "empty name"},
      {{Dir("a"), File("a/")}, "empty name"},
      {{File("")}, "1 to"},
      {{File(std::string("a\0b", 3))}, "NUL"},
      {{File(std::string(256, 'n'))}, "over 255"},
      {{File("x"), File("x", 5)}, "listed twice"},
      {{File("a/b")}, "not a directory listed before"},
      {{File("a"), File("a/b")}, "not a directory listed before"},
      {{Link("l", "."), File("l/b")}, "not a directory listed before"},
      {{Link("l", "/etc")}, "absolute"},
      {{Link("l", "..")}, "leaves the tree"},
      {{Dir("a"), Link("a/l", "../../x")}, "leaves the tree"},
      {{Link("l", std::string("a\0", 2))}, "NUL"},
      {{Link("l", "")}, "1 to"},
      {{dir_with_size}, "only a file"},
      {{short_digest}, "wrong size"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<std::string> bytes = EncodeTreeManifest(c.entries);
    ASSERT_FALSE(bytes.ok()) << c.words;
    EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(bytes.status().message().find(c.words), std::string::npos)
        << bytes.status() << " (wanted: " << c.words << ")";
  }
}

// Each link resolves inside on its own words, but not through the others:
// d/up is the root, so "d/up/.." is the root's parent; a loop never ends.
TEST(TreeManifestTest, SymlinksAreFollowedThroughOtherSymlinks) {
  EXPECT_TRUE(
      EncodeTreeManifest({Dir("d"), Link("d/up", ".."), Link("ok", "d/up/d")})
          .ok());
  absl::StatusOr<std::string> escape =
      EncodeTreeManifest({Dir("d"), Link("d/up", ".."), Link("x", "d/up/..")});
  ASSERT_FALSE(escape.ok());
  EXPECT_NE(escape.status().message().find("\"x\": its target leaves"),
            std::string::npos)
      << escape.status();
  absl::StatusOr<std::string> loop =
      EncodeTreeManifest({Link("a", "b"), Link("b", "a")});
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("too many symlinks"),
            std::string::npos)
      << loop.status();
  // A link may name nothing in the tree, and a chain of 40 is allowed.
  std::vector<TreeEntry> chain = {Link("l0", "missing")};
  for (int i = 1; i <= kMaxSymlinkHops; ++i) {
    chain.push_back(Link(absl::StrCat("l", i), absl::StrCat("l", i - 1)));
  }
  EXPECT_TRUE(EncodeTreeManifest(chain).ok());
  chain.push_back(Link("l41", "l40"));
  EXPECT_FALSE(EncodeTreeManifest(chain).ok());
}

// Bytes made by hand: whatever the encoder would never write is refused.
TEST(TreeManifestTest, ParseAcceptsOnlyTheCanonicalEncoding) {
  const std::string good = *EncodeTreeManifest(Release());
  EXPECT_FALSE(ParseTreeManifest("").ok());
  EXPECT_FALSE(ParseTreeManifest("verityd tree v2\n").ok());
  EXPECT_FALSE(ParseTreeManifest(good + "x").ok());
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_FALSE(ParseTreeManifest(good.substr(0, cut)).ok()) << cut;
  }
  // Two entries swapped: out of order.
  const std::string one = *EncodeTreeManifest({File("a")});
  const std::string other = *EncodeTreeManifest({File("b")});
  const size_t header = 16 + 4;
  std::string swapped = *EncodeTreeManifest({File("a"), File("b")});
  swapped =
      swapped.substr(0, header) + other.substr(header) + one.substr(header);
  absl::StatusOr<TreeManifest> parsed = ParseTreeManifest(swapped);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("out of order"), std::string::npos);
  // A flag bit, a type and an algorithm that do not exist.
  std::string flags = one;
  flags[header + 1 + 2 + 1] = 2;
  EXPECT_FALSE(ParseTreeManifest(flags).ok());
  std::string type = one;
  type[header] = 4;
  EXPECT_FALSE(ParseTreeManifest(type).ok());
  std::string algorithm = one;
  algorithm[header + 1 + 2 + 1 + 1 + 8] = 3;
  EXPECT_FALSE(ParseTreeManifest(algorithm).ok());
  // An entry count over the limit, refused before anything is read.
  std::string count = one;
  count[16 + 2] = 0x20;  // 0x200001 entries
  absl::StatusOr<TreeManifest> many = ParseTreeManifest(count);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("over"), std::string::npos);
}

TEST(TreeManifestTest, CheckTreePath) {
  EXPECT_TRUE(CheckTreePath("a/b.c/d").ok());
  EXPECT_TRUE(CheckTreePath("...").ok());
  EXPECT_TRUE(CheckTreePath(".hidden").ok());
  for (const char* bad :
       {"", "/", "a/", "/a", "a//b", ".", "..", "a/./b", "a/../b"}) {
    EXPECT_FALSE(CheckTreePath(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace verity
