// The atomic-writer layout: a switch makes the top-level names resolve into
// the new version, keeps the one before for readers inside it, removes the
// older ones and what a failed attempt left; a folder holding anything else
// is refused.

#include "lib/manifest/versioned_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/testing/fsverity_cli.h"

namespace verity {
namespace {

// A path under the test's temporary folder, absent.
std::string FreshDir(absl::string_view name) {
  const std::string dir =
      FreshTestDir(absl::StrCat("versioned_folder_test_", name));
  EXPECT_TRUE(RemoveRecursively(dir).ok());
  return dir;
}

void Write(const std::string& path, absl::string_view content) {
  ASSERT_TRUE(WriteNewFileDurably(path, content).ok()) << path;
}

std::string Read(const std::string& path) {
  absl::StatusOr<std::string> content = ReadSmallFile(path, 1 << 20);
  return content.ok() ? *content : "<absent>";
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Stages version `id` holding `file` with `content`, and switches to it.
void Publish(VersionedFolder& folder, const std::string& id,
             const std::string& file, absl::string_view content) {
  absl::StatusOr<std::string> staged = folder.Stage(id);
  ASSERT_TRUE(staged.ok()) << staged.status();
  Write(JoinPath(*staged, file), content);
  ASSERT_TRUE(folder.Switch(id, {file}).ok());
}

TEST(VersionedFolderTest, SwitchesKeepsThePreviousAndPrunesTheRest) {
  const std::string dir = FreshDir("switch");
  absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(dir);
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_EQ(folder->current(), "");
  Publish(*folder, "v1", "config", "one");
  EXPECT_EQ(Read(dir + "/config"), "one");
  // A reader inside v1 (an open folder) keeps reading v1 across switches.
  const int inside_v1 = open((dir + "/..data").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(inside_v1, 0);
  Publish(*folder, "v2", "config", "two");
  EXPECT_EQ(Read(dir + "/config"), "two");
  EXPECT_EQ(folder->current(), "v2");
  EXPECT_TRUE(folder->Has("v1"));  // kept for readers inside it
  const int fd = openat(inside_v1, "config", O_RDONLY);
  ASSERT_GE(fd, 0);
  char buf[8] = {};
  EXPECT_EQ(read(fd, buf, sizeof buf), 3);
  EXPECT_STREQ(buf, "one");
  close(fd);
  close(inside_v1);
  // v3 renames the file: the old top-level name goes at once; v1 stays
  // until Prune, which keeps v2 (the one v3 replaced).
  Publish(*folder, "v3", "settings", "three");
  EXPECT_EQ(Read(dir + "/settings"), "three");
  EXPECT_FALSE(Exists(dir + "/config"));
  EXPECT_TRUE(folder->Has("v1"));
  ASSERT_TRUE(folder->Prune().ok());
  EXPECT_FALSE(folder->Has("v1"));
  EXPECT_TRUE(folder->Has("v2"));
  EXPECT_TRUE(folder->Has("v3"));
  // Reopened, it knows its current version.
  absl::StatusOr<VersionedFolder> again = VersionedFolder::Open(dir);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->current(), "v3");
  // Back to a version it still has: no staging needed.
  ASSERT_TRUE(again->Switch("v2", {"config"}).ok());
  EXPECT_EQ(Read(dir + "/config"), "two");
}

TEST(VersionedFolderTest, AFailedAttemptLeavesTheCurrentVersion) {
  const std::string dir = FreshDir("discard");
  absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(dir);
  ASSERT_TRUE(folder.ok());
  Publish(*folder, "v1", "config", "one");
  absl::StatusOr<std::string> staged = folder->Stage("v2");
  ASSERT_TRUE(staged.ok());
  Write(JoinPath(*staged, "config"), "half");
  ASSERT_TRUE(folder->Discard("v2").ok());
  EXPECT_FALSE(Exists(*staged));
  EXPECT_EQ(Read(dir + "/config"), "one");
  EXPECT_EQ(folder->Switch("v2", {"config"}).code(),
            absl::StatusCode::kFailedPrecondition);
  // A leftover staging folder (a crash) is pruned after the next switch.
  ASSERT_TRUE(folder->Stage("v9").ok());
  Publish(*folder, "v3", "config", "three");
  ASSERT_TRUE(folder->Prune().ok());
  EXPECT_FALSE(Exists(dir + "/..staging-v9"));
}

TEST(VersionedFolderTest, RefusesWhatIsNotItsLayout) {
  const std::string dir = FreshDir("foreign");
  ASSERT_TRUE(MakeDirs(dir).ok());
  Write(dir + "/app.conf", "mine");
  EXPECT_EQ(VersionedFolder::Open(dir).status().code(),
            absl::StatusCode::kFailedPrecondition);
  const std::string clean = FreshDir("names");
  absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(clean);
  ASSERT_TRUE(folder.ok());
  EXPECT_EQ(folder->Stage("../x").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(folder->Stage("staging-x").status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(folder->Stage("v1").ok());
  EXPECT_EQ(folder->Switch("v1", {"..data"}).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace verity
