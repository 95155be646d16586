// The atomic-writer layout: a switch makes the top-level names resolve into
// the new version, keeps the one before for readers inside it, removes the
// older ones and what a failed attempt left; a folder holding anything else,
// another user's, one others can write and one in use are refused; a switch
// left half done is finished by the next Open; a version folder found there
// is replaced, never switched to.

#include "lib/manifest/versioned_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/bytes.h"
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

bool IsVersion(const std::string& dir, const std::string& id) {
  struct stat st;
  return lstat(JoinPath(dir, "..").append(id).c_str(), &st) == 0 &&
         S_ISDIR(st.st_mode);
}

// Stages version `id` holding `file` with `content`, and switches to it.
void Publish(VersionedFolder& folder, const std::string& id,
             const std::string& file, absl::string_view content) {
  absl::StatusOr<UniqueFd> staged = folder.Stage(id);
  ASSERT_TRUE(staged.ok()) << staged.status();
  UniqueFd out =
      OpenAt(staged->get(), file, O_WRONLY | O_CREAT | O_EXCL, 0644).value();
  ASSERT_TRUE(WriteAll(out.get(), AsBytes(content), file).ok());
  const absl::Status switched = folder.Switch(id);
  ASSERT_TRUE(switched.ok()) << switched;
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
  EXPECT_TRUE(IsVersion(dir, "v1"));  // kept for readers inside it
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
  EXPECT_TRUE(IsVersion(dir, "v1"));
  ASSERT_TRUE(folder->Prune().ok());
  EXPECT_FALSE(IsVersion(dir, "v1"));
  EXPECT_TRUE(IsVersion(dir, "v2"));
  EXPECT_TRUE(IsVersion(dir, "v3"));
  // Back to a version it wrote and still has: no staging needed.
  ASSERT_TRUE(folder->Switch("v2").ok());
  EXPECT_EQ(Read(dir + "/config"), "two");
  // Reopened (once the first lets go), it knows its current version, and
  // wrote none of them.
  *folder = VersionedFolder::Open(FreshDir("elsewhere")).value();
  absl::StatusOr<VersionedFolder> again = VersionedFolder::Open(dir);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->current(), "v2");
  EXPECT_FALSE(again->Wrote("v2"));
  EXPECT_EQ(again->Switch("v3").code(), absl::StatusCode::kFailedPrecondition);
}

TEST(VersionedFolderTest, AFailedAttemptLeavesTheCurrentVersion) {
  const std::string dir = FreshDir("discard");
  absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(dir);
  ASSERT_TRUE(folder.ok());
  Publish(*folder, "v1", "config", "one");
  {
    absl::StatusOr<UniqueFd> staged = folder->Stage("v2");
    ASSERT_TRUE(staged.ok());
    ASSERT_TRUE(OpenAt(staged->get(), "config", O_WRONLY | O_CREAT, 0644).ok());
  }
  ASSERT_TRUE(folder->Discard("v2").ok());
  EXPECT_FALSE(Exists(dir + "/..staging-v2"));
  EXPECT_EQ(Read(dir + "/config"), "one");
  EXPECT_EQ(folder->Switch("v2").code(), absl::StatusCode::kFailedPrecondition);
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
  EXPECT_EQ(VersionedFolder::CheckTopNames({"ok", "..data"}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(VersionedFolder::CheckTopNames({"ok", ".hidden", "..."}).code() ==
              absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(VersionedFolder::CheckTopNames({"ok", ".hidden"}).ok());
}

TEST(VersionedFolderTest, RefusesAFolderItCannotOwn) {
  // A symlink, a folder others can write, one in use.
  const std::string real = FreshDir("real");
  ASSERT_TRUE(MakeDirs(real).ok());
  const std::string link = FreshDir("link");
  ASSERT_EQ(symlink(real.c_str(), link.c_str()), 0);
  EXPECT_EQ(VersionedFolder::Open(link).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_EQ(chmod(real.c_str(), 0775), 0);
  const absl::Status writable = VersionedFolder::Open(real).status();
  EXPECT_EQ(writable.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(writable.message().find("writable by group or others"),
            std::string::npos)
      << writable;
  ASSERT_EQ(chmod(real.c_str(), 0755), 0);
  absl::StatusOr<VersionedFolder> first = VersionedFolder::Open(real);
  ASSERT_TRUE(first.ok()) << first.status();
  const absl::Status second = VersionedFolder::Open(real).status();
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(second.message().find("in use"), std::string::npos) << second;
}

// A version folder found there was not written by this process: a switch
// to that id replaces it by what was staged.
TEST(VersionedFolderTest, AFolderFoundThereIsReplacedNotSwitchedTo) {
  const std::string dir = FreshDir("planted");
  absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(dir);
  ASSERT_TRUE(folder.ok());
  Publish(*folder, "v1", "config", "one");
  ASSERT_EQ(mkdir((dir + "/..v2").c_str(), 0755), 0);
  Write(dir + "/..v2/config", "planted");
  EXPECT_EQ(folder->Switch("v2").code(), absl::StatusCode::kFailedPrecondition);
  Publish(*folder, "v2", "config", "two");
  EXPECT_EQ(Read(dir + "/config"), "two");
  EXPECT_FALSE(Exists(dir + "/..staging-v2"));
}

// Names up to NAME_MAX: the temporary links are named by number.
TEST(VersionedFolderTest, TakesTheLongestNames) {
  const std::string dir = FreshDir("long");
  absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(dir);
  ASSERT_TRUE(folder.ok());
  const std::string name(255, 'n');
  Publish(*folder, "v1", name, "long");
  EXPECT_EQ(Read(JoinPath(dir, name)), "long");
}

// A crash after ..data was renamed, before the links: the next Open (and
// any Repair) makes them the version's.
TEST(VersionedFolderTest, OpenFinishesASwitchLeftHalfDone) {
  const std::string dir = FreshDir("half");
  {
    absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(dir);
    ASSERT_TRUE(folder.ok());
    Publish(*folder, "v1", "old", "one");
  }
  // What v2's switch did before the crash: its folder, then ..data.
  ASSERT_EQ(mkdir((dir + "/..v2").c_str(), 0755), 0);
  Write(dir + "/..v2/new", "two");
  ASSERT_EQ(unlink((dir + "/..data").c_str()), 0);
  ASSERT_EQ(symlink("..v2", (dir + "/..data").c_str()), 0);
  ASSERT_EQ(symlink("x", (dir + "/..tmp-7").c_str()), 0);
  EXPECT_FALSE(Exists(dir + "/new"));
  absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(dir);
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_EQ(folder->current(), "v2");
  EXPECT_EQ(Read(dir + "/new"), "two");
  EXPECT_FALSE(Exists(dir + "/old"));
  EXPECT_FALSE(Exists(dir + "/..tmp-7"));
}

TEST(VersionedFolderTest, WritesItsOwnFiles) {
  const std::string dir = FreshDir("files");
  absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(dir);
  ASSERT_TRUE(folder.ok());
  ASSERT_TRUE(folder->WriteFile("..status", "a").ok());
  ASSERT_TRUE(folder->WriteFile("..status", "b").ok());
  EXPECT_EQ(Read(dir + "/..status"), "b");
  EXPECT_FALSE(folder->WriteFile("status", "x").ok());
  EXPECT_FALSE(folder->WriteFile("..data", "x").ok());
  // Pruning leaves it.
  Publish(*folder, "v1", "config", "one");
  ASSERT_TRUE(folder->Prune().ok());
  EXPECT_EQ(Read(dir + "/..status"), "b");
}

}  // namespace
}  // namespace verity
