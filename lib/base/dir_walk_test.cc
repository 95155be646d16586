// Tests WalkBeneath and RemoveBeneath: order, trees deeper than the process
// may hold descriptors (a descriptor per level would run out), symlinks
// never followed, and a directory moved while it is walked.

#include "lib/base/dir_walk.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/testing/fsverity_cli.h"

namespace verity {
namespace {

using ::testing::ElementsAre;

std::string FreshDir(absl::string_view name) {
  return FreshTestDir(absl::StrCat("dir_walk_test_", name));
}

UniqueFd OpenDir(const std::string& path) {
  return OpenAt(AT_FDCWD, path, O_RDONLY | O_DIRECTORY).value();
}

// Makes DEPTH nested folders "d" beneath `root`, a file in the deepest;
// returns the deepest's path relative to `root`.
std::string MakeChain(const std::string& root, int depth) {
  UniqueFd dir = OpenDir(root);
  std::string relative;
  for (int i = 0; i < depth; ++i) {
    EXPECT_EQ(mkdirat(dir.get(), "d", 0755), 0);
    dir = OpenAt(dir.get(), "d", O_RDONLY | O_DIRECTORY).value();
    relative = JoinPath(relative, "d");
  }
  EXPECT_TRUE(OpenAt(dir.get(), "f", O_WRONLY | O_CREAT, 0644).ok());
  return relative;
}

// Runs `body` with at most `limit` descriptors open.
template <typename Body>
void WithDescriptorLimit(rlim_t limit, Body body) {
  rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = limit;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  absl::Cleanup restore = [&old] { setrlimit(RLIMIT_NOFILE, &old); };
  body();
}

TEST(DirWalkTest, VisitsInNameOrderAndLeavesAfter) {
  const std::string root = FreshDir("order");
  ASSERT_EQ(mkdir((root + "/b").c_str(), 0755), 0);
  ASSERT_TRUE(WriteNewFileDurably(root + "/b/x", "x").ok());
  ASSERT_TRUE(WriteNewFileDurably(root + "/a", "a").ok());
  ASSERT_EQ(symlink("b", (root + "/c").c_str()), 0);
  std::vector<std::string> seen;
  WalkVisitor visitor;
  visitor.visit = [&seen](const WalkEntry& e) -> absl::StatusOr<bool> {
    seen.push_back(absl::StrCat("visit ", e.path));
    return true;  // asks to go into everything: only b is a directory
  };
  visitor.leave = [&seen](const WalkEntry& e) {
    seen.push_back(absl::StrCat("leave ", e.path));
    return absl::OkStatus();
  };
  const UniqueFd fd = OpenDir(root);
  ASSERT_TRUE(WalkBeneath(fd.get(), root, visitor).ok());
  EXPECT_THAT(seen, ElementsAre("visit a", "visit b", "visit b/x", "leave b",
                                "visit c"));
}

TEST(DirWalkTest, DeepTreesNeedFewDescriptors) {
  const std::string root = FreshDir("deep");
  const std::string deepest = MakeChain(root, 300);
  int files = 0, depth = 0;
  WalkVisitor visitor;
  visitor.visit = [&](const WalkEntry& e) -> absl::StatusOr<bool> {
    if (S_ISREG(e.st.st_mode)) {
      ++files;
      EXPECT_EQ(e.path, JoinPath(deepest, "f"));
    }
    depth = std::max<int>(depth, std::count(e.path.begin(), e.path.end(), '/'));
    return true;
  };
  WithDescriptorLimit(32, [&] {
    const UniqueFd fd = OpenDir(root);
    const absl::Status walked = WalkBeneath(fd.get(), root, visitor);
    EXPECT_TRUE(walked.ok()) << walked;
    const absl::Status removed = RemoveBeneath(AT_FDCWD, root + "/d", root);
    EXPECT_TRUE(removed.ok()) << removed;
  });
  EXPECT_EQ(files, 1);
  EXPECT_EQ(depth, 300);
  EXPECT_TRUE(ListDir(root)->empty());
}

TEST(DirWalkTest, RemovalFollowsNoSymlink) {
  const std::string root = FreshDir("links");
  const std::string outside = FreshDir("links_outside");
  ASSERT_TRUE(WriteNewFileDurably(outside + "/keep", "keep").ok());
  ASSERT_EQ(mkdir((root + "/t").c_str(), 0755), 0);
  ASSERT_EQ(symlink(outside.c_str(), (root + "/t/out").c_str()), 0);
  ASSERT_TRUE(RemoveBeneath(AT_FDCWD, root + "/t", root + "/t").ok());
  EXPECT_TRUE(ListDir(root)->empty());
  EXPECT_EQ(ReadSmallFile(outside + "/keep", 100).value(), "keep");
  // Nothing there: nothing to do.
  EXPECT_TRUE(RemoveBeneath(AT_FDCWD, root + "/t", root + "/t").ok());
}

TEST(DirWalkTest, ADirectoryMovedWhileWalkedIsAnError) {
  const std::string root = FreshDir("moved");
  ASSERT_EQ(mkdir((root + "/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/a/b").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root + "/c").c_str(), 0755), 0);
  ASSERT_TRUE(WriteNewFileDurably(root + "/a/b/x", "x").ok());
  WalkVisitor visitor;
  visitor.visit = [&root](const WalkEntry& e) -> absl::StatusOr<bool> {
    // Inside a/b, b is moved under c: climbing back finds c, not a.
    if (e.path == "a/b/x") {
      EXPECT_EQ(rename((root + "/a/b").c_str(), (root + "/c/b").c_str()), 0);
    }
    return true;
  };
  const UniqueFd fd = OpenDir(root);
  const absl::Status walked = WalkBeneath(fd.get(), root, visitor);
  EXPECT_TRUE(absl::IsFailedPrecondition(walked)) << walked;
}

}  // namespace
}  // namespace verity
