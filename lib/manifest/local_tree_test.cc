// Trees on local disk: a folder scans into canonical entries with the digests
// `fsverity digest` would print; what a tree cannot hold is refused by name;
// the writers never follow a symlink, so a planted one cannot redirect a
// write or a reuse outside the tree.

#include "lib/manifest/local_tree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/bytes.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/tree/file_digest.h"

namespace verity {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string FreshDir(absl::string_view name) {
  return FreshTestDir(absl::StrCat("local_tree_test_", name));
}

void WriteFile(const std::string& path, absl::string_view content,
               mode_t mode = 0644) {
  ASSERT_TRUE(WriteNewFileDurably(path, content).ok()) << path;
  ASSERT_EQ(chmod(path.c_str(), mode), 0);
}

std::string ReadFile(const std::string& path) {
  absl::StatusOr<std::string> content = ReadSmallFile(path, 1 << 20);
  return content.ok() ? *content : "<" + content.status().ToString() + ">";
}

std::vector<std::string> Paths(const std::vector<TreeEntry>& entries) {
  std::vector<std::string> paths;
  for (const TreeEntry& entry : entries) paths.push_back(entry.path);
  return paths;
}

UniqueFd OpenDir(const std::string& path) {
  absl::StatusOr<UniqueFd> fd = OpenAt(AT_FDCWD, path, O_RDONLY | O_DIRECTORY);
  EXPECT_TRUE(fd.ok()) << fd.status();
  return fd.ok() ? *std::move(fd) : UniqueFd();
}

TEST(ScanFolderTest, ListsATreeInCanonicalOrderWithItsDigests) {
  const std::string root = FreshDir("scan");
  ASSERT_EQ(mkdir(JoinPath(root, "a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(JoinPath(root, "a/empty").c_str(), 0755), 0);
  WriteFile(JoinPath(root, "a/x"), "x content");
  WriteFile(JoinPath(root, "a-b"), std::string(10000, 'b'), 0755);
  ASSERT_EQ(symlink("a/x", JoinPath(root, "link").c_str()), 0);
  absl::StatusOr<std::vector<TreeEntry>> entries =
      ScanFolder(root, HashAlgorithm::kSha256, 2);
  ASSERT_TRUE(entries.ok()) << entries.status();
  // By path bytes: '-' sorts before '/'.
  EXPECT_THAT(Paths(*entries),
              ElementsAre("a", "a-b", "a/empty", "a/x", "link"));
  const TreeEntry& big = (*entries)[1];
  EXPECT_EQ(big.type, TreeEntryType::kFile);
  EXPECT_TRUE(big.executable);
  EXPECT_EQ(big.size, 10000u);
  absl::StatusOr<MerkleTree> tree = BuildMerkleTreeFromFile(
      JoinPath(root, "a-b"), TreeFileParams(HashAlgorithm::kSha256), 1);
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(big.digest.digest, tree->digest);
  EXPECT_FALSE((*entries)[3].executable);
  EXPECT_EQ((*entries)[2].type, TreeEntryType::kDirectory);
  EXPECT_EQ((*entries)[4].type, TreeEntryType::kSymlink);
  EXPECT_EQ((*entries)[4].target, "a/x");
  EXPECT_TRUE(EncodeTreeManifest(*entries).ok());
}

TEST(ScanFolderTest, RefusesWhatATreeCannotHold) {
  const std::string fifo_root = FreshDir("fifo");
  ASSERT_EQ(mkfifo(JoinPath(fifo_root, "pipe").c_str(), 0644), 0);
  absl::StatusOr<std::vector<TreeEntry>> fifo =
      ScanFolder(fifo_root, HashAlgorithm::kSha256, 1);
  EXPECT_EQ(fifo.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(fifo.status().message(), HasSubstr("pipe"));

  const std::string escape_root = FreshDir("escape");
  ASSERT_EQ(mkdir(JoinPath(escape_root, "d").c_str(), 0755), 0);
  ASSERT_EQ(symlink("../../etc", JoinPath(escape_root, "d/up").c_str()), 0);
  absl::StatusOr<std::vector<TreeEntry>> escape =
      ScanFolder(escape_root, HashAlgorithm::kSha256, 1);
  EXPECT_EQ(escape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(escape.status().message(), HasSubstr("d/up"));

  EXPECT_EQ(
      ScanFolder(JoinPath(escape_root, "absent"), HashAlgorithm::kSha256, 1)
          .status()
          .code(),
      absl::StatusCode::kNotFound);
}

TEST(OpenBeneathTest, FollowsNoSymlink) {
  const std::string root = FreshDir("beneath");
  const std::string outside = FreshDir("beneath_outside");
  ASSERT_EQ(symlink(outside.c_str(), JoinPath(root, "out").c_str()), 0);
  WriteFile(JoinPath(outside, "f"), "outside");
  ASSERT_EQ(
      symlink(JoinPath(outside, "f").c_str(), JoinPath(root, "f").c_str()), 0);
  const UniqueFd root_fd = OpenDir(root);
  EXPECT_EQ(OpenBeneath(root_fd.get(), "out/f", O_RDONLY).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(OpenBeneath(root_fd.get(), "f", O_RDONLY).status().code(),
            absl::StatusCode::kFailedPrecondition);
  TreeEntry through;
  through.path = "out/new";
  EXPECT_FALSE(CreateTreeFile(root_fd.get(), through, {}).ok());
  EXPECT_NE(access(JoinPath(outside, "new").c_str(), F_OK), 0);
  EXPECT_EQ(OpenBeneath(root_fd.get(), "../x", O_RDONLY).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(LocalTreeWriterTest, MakesTheSkeletonReusesSameFilesAndCopies) {
  const std::string old_root = FreshDir("old");
  ASSERT_EQ(mkdir(JoinPath(old_root, "d").c_str(), 0755), 0);
  WriteFile(JoinPath(old_root, "d/same"), "same content", 0755);
  WriteFile(JoinPath(old_root, "d/changed"), "old content");
  WriteFile(JoinPath(old_root, "d/mode"), "mode content");
  absl::StatusOr<std::vector<TreeEntry>> old_entries =
      ScanFolder(old_root, HashAlgorithm::kSha256, 1);
  ASSERT_TRUE(old_entries.ok()) << old_entries.status();
  // The new version: d/changed has new content, d/mode became executable,
  // and a symlink and a copy of d/same appear.
  const std::string staging = FreshDir("staging");
  ASSERT_EQ(mkdir(JoinPath(staging, "d").c_str(), 0755), 0);
  WriteFile(JoinPath(staging, "d/same"), "same content", 0755);
  WriteFile(JoinPath(staging, "d/same2"), "same content", 0755);
  WriteFile(JoinPath(staging, "d/changed"), "new content");
  WriteFile(JoinPath(staging, "d/mode"), "mode content", 0755);
  ASSERT_EQ(symlink("d/same", JoinPath(staging, "s").c_str()), 0);
  absl::StatusOr<std::vector<TreeEntry>> entries =
      ScanFolder(staging, HashAlgorithm::kSha256, 1);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_THAT(Paths(*entries), ElementsAre("d", "d/changed", "d/mode", "d/same",
                                           "d/same2", "s"));

  const std::string new_root = FreshDir("new");
  const UniqueFd from = OpenDir(old_root);
  const UniqueFd to = OpenDir(new_root);
  ASSERT_TRUE(MakeDirectoriesAndSymlinks(to.get(), *entries).ok());
  EXPECT_EQ(*ReuseFile(from.get(), to.get(), (*entries)[3], {}),
            Reused::kLinked);
  EXPECT_EQ(*ReuseFile(from.get(), to.get(), (*entries)[1], {}), Reused::kNo);
  // Same content, another mode: not adopted, but copied (and verified).
  EXPECT_EQ(*ReuseFile(from.get(), to.get(), (*entries)[2], {}),
            Reused::kCopied);
  ASSERT_TRUE(CopyTreeFile(to.get(), (*entries)[3], (*entries)[4], {}).ok());

  struct stat linked, original, copy;
  ASSERT_EQ(stat(JoinPath(new_root, "d/same").c_str(), &linked), 0);
  ASSERT_EQ(stat(JoinPath(old_root, "d/same").c_str(), &original), 0);
  ASSERT_EQ(stat(JoinPath(new_root, "d/same2").c_str(), &copy), 0);
  EXPECT_EQ(linked.st_ino, original.st_ino);
  EXPECT_NE(copy.st_ino, original.st_ino);
  EXPECT_EQ(ReadFile(JoinPath(new_root, "d/same2")), "same content");
  EXPECT_NE(copy.st_mode & S_IXUSR, 0u);
  char target[64] = {};
  ASSERT_GT(readlink(JoinPath(new_root, "s").c_str(), target, sizeof target),
            0);
  EXPECT_STREQ(target, "d/same");
  struct stat copied_mode;
  ASSERT_EQ(stat(JoinPath(new_root, "d/mode").c_str(), &copied_mode), 0);
  EXPECT_EQ(copied_mode.st_mode & 07777, 0755u);
  EXPECT_NE(copied_mode.st_ino, original.st_ino);
  // A file created for a fetch: new, with exactly the entry's mode, whatever
  // the umask.
  const mode_t umask_was = umask(077);
  absl::StatusOr<UniqueFd> created =
      CreateTreeFile(to.get(), (*entries)[1], {});
  umask(umask_was);
  ASSERT_TRUE(created.ok()) << created.status();
  struct stat made;
  ASSERT_EQ(fstat(created->get(), &made), 0);
  EXPECT_EQ(made.st_mode & 07777, 0644u);
  EXPECT_EQ(CreateTreeFile(to.get(), (*entries)[1], {}).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(LocalTreeWriterTest, DoesNotReuseThroughASymlink) {
  const std::string old_root = FreshDir("old_link");
  const std::string elsewhere = FreshDir("elsewhere");
  WriteFile(JoinPath(elsewhere, "f"), "content");
  ASSERT_EQ(symlink(JoinPath(elsewhere, "f").c_str(),
                    JoinPath(old_root, "f").c_str()),
            0);
  absl::StatusOr<std::vector<TreeEntry>> entries =
      ScanFolder(elsewhere, HashAlgorithm::kSha256, 1);
  ASSERT_TRUE(entries.ok());
  const std::string new_root = FreshDir("new_link");
  const UniqueFd from = OpenDir(old_root);
  const UniqueFd to = OpenDir(new_root);
  EXPECT_EQ(*ReuseFile(from.get(), to.get(), (*entries)[0], {}), Reused::kNo);
  EXPECT_NE(access(JoinPath(new_root, "f").c_str(), F_OK), 0);
}

// Known content is not hashed: what is at the path is linked if stat(2)
// says it is a regular file of the entry's size and mode (one of another
// mode is copied and the copy hashed), and nothing of a refusal stays
// behind.
TEST(LocalTreeWriterTest, LinksKnownContentOnlyIfTypeSizeAndModeFit) {
  const std::string old_root = FreshDir("old_known");
  WriteFile(JoinPath(old_root, "f"), "different, same size");
  WriteFile(JoinPath(old_root, "big"), "longer than the entry says");
  WriteFile(JoinPath(old_root, "x"), "content");
  ASSERT_EQ(mkdir(JoinPath(old_root, "dir").c_str(), 0755), 0);
  ASSERT_EQ(symlink("f", JoinPath(old_root, "link").c_str()), 0);
  const std::string staging = FreshDir("staging_known");
  WriteFile(JoinPath(staging, "big"), "short");
  WriteFile(JoinPath(staging, "dir"), "a file now");
  WriteFile(JoinPath(staging, "f"), "what the tree holds!");
  WriteFile(JoinPath(staging, "gone"), "not in the old version");
  WriteFile(JoinPath(staging, "link"), "different, same size");
  WriteFile(JoinPath(staging, "x"), "content", 0755);
  absl::StatusOr<std::vector<TreeEntry>> entries =
      ScanFolder(staging, HashAlgorithm::kSha256, 1);
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_THAT(Paths(*entries),
              ElementsAre("big", "dir", "f", "gone", "link", "x"));
  const std::string new_root = FreshDir("new_known");
  const UniqueFd from = OpenDir(old_root);
  const UniqueFd to = OpenDir(new_root);
  const auto reuse = [&](int i) {
    return *ReuseFile(from.get(), to.get(), (*entries)[i], {},
                      /*known_same=*/true);
  };
  // The caller vouches for the content: a same-size file is linked.
  EXPECT_EQ(reuse(2), Reused::kLinked);
  EXPECT_EQ(ReadFile(JoinPath(new_root, "f")), "different, same size");
  EXPECT_EQ(reuse(0), Reused::kNo);  // another size
  EXPECT_EQ(reuse(1), Reused::kNo);  // a directory
  EXPECT_EQ(reuse(3), Reused::kNo);  // absent
  EXPECT_EQ(reuse(4), Reused::kNo);  // a symlink, even to a file that fits
  for (const char* name : {"big", "dir", "gone", "link"}) {
    EXPECT_NE(access(JoinPath(new_root, name).c_str(), F_OK), 0) << name;
  }
  // Not executable: copied, and the copy hashed, vouched for or not.
  EXPECT_EQ(reuse(5), Reused::kCopied);
  EXPECT_EQ(ReadFile(JoinPath(new_root, "x")), "content");
}

// A file with the right bytes but someone else's inode (another owner, a
// mode the tree does not give, a second link) is a copy waiting to happen:
// it is copied, never adopted, and the copy is what is verified; a write
// through the old name afterwards changes nothing in the new tree.
TEST(LocalTreeWriterTest, AdoptsOnlyInodesItOwnsWholly) {
  const std::string old_root = FreshDir("old_adopt");
  const std::string staging = FreshDir("staging_adopt");
  for (const char* name : {"linked", "mine", "setuid", "theirs"}) {
    WriteFile(JoinPath(old_root, name), absl::StrCat(name, " content"));
    WriteFile(JoinPath(staging, name), absl::StrCat(name, " content"));
  }
  const std::string other_link = JoinPath(FreshDir("adopt_other"), "l");
  ASSERT_EQ(link(JoinPath(old_root, "linked").c_str(), other_link.c_str()), 0);
  ASSERT_EQ(chmod(JoinPath(old_root, "setuid").c_str(), 04777), 0);
  // Given to nobody where this process may (root, outside a user namespace).
  const bool given_away =
      chown(JoinPath(old_root, "theirs").c_str(), 65534, 0) == 0;
  absl::StatusOr<std::vector<TreeEntry>> entries =
      ScanFolder(staging, HashAlgorithm::kSha256, 1);
  ASSERT_TRUE(entries.ok()) << entries.status();
  const std::string new_root = FreshDir("new_adopt");
  const UniqueFd from = OpenDir(old_root);
  const UniqueFd to = OpenDir(new_root);
  const auto inode = [](const std::string& path) {
    struct stat st;
    EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
    return std::make_pair(st.st_ino, st.st_mode & 07777);
  };
  for (const TreeEntry& entry : *entries) {
    const Reused reused = *ReuseFile(from.get(), to.get(), entry, {});
    const std::string old_path = JoinPath(old_root, entry.path);
    const std::string new_path = JoinPath(new_root, entry.path);
    if (entry.path == "mine" || (entry.path == "theirs" && !given_away)) {
      EXPECT_EQ(reused, Reused::kLinked) << entry.path;
      continue;
    }
    EXPECT_EQ(reused, Reused::kCopied) << entry.path;
    EXPECT_NE(inode(new_path).first, inode(old_path).first) << entry.path;
    EXPECT_EQ(inode(new_path).second, 0644u) << entry.path;
    // In place, through the old name.
    UniqueFd old = OpenAt(AT_FDCWD, old_path, O_WRONLY | O_TRUNC).value();
    ASSERT_TRUE(WriteAll(old.get(), AsBytes("changed after"), old_path).ok());
    EXPECT_EQ(ReadFile(new_path), absl::StrCat(entry.path, " content"));
  }
  // verity sync's versions share inodes, 0444: linked with a second link,
  // and a file of another mode copied to 0444.
  const std::string versions = FreshDir("versions_adopt");
  const UniqueFd next = OpenDir(versions);
  const TreeFileModes shared{/*read_only=*/true, /*single_link=*/false};
  ASSERT_EQ(chmod(JoinPath(new_root, "mine").c_str(), 0444), 0);
  EXPECT_EQ(*ReuseFile(to.get(), next.get(), (*entries)[1], shared),
            Reused::kLinked);
  EXPECT_EQ(*ReuseFile(to.get(), next.get(), (*entries)[0], shared),
            Reused::kCopied);
  EXPECT_EQ(inode(JoinPath(versions, "linked")).second, 0444u);
}

// What verity sync asks of a version it did not write: exactly the tree,
// nothing more, every file hashed, read-only and this user's.
TEST(LocalTreeCheckTest, CheckFolderHoldsExactlyTheTree) {
  const std::string root = FreshDir("check");
  ASSERT_EQ(mkdir(JoinPath(root, "d").c_str(), 0755), 0);
  WriteFile(JoinPath(root, "d/f"), "content", 0444);
  WriteFile(JoinPath(root, "x"), "run me", 0555);
  ASSERT_EQ(symlink("d/f", JoinPath(root, "l").c_str()), 0);
  absl::StatusOr<std::vector<TreeEntry>> entries =
      ScanFolder(root, HashAlgorithm::kSha256, 1);
  ASSERT_TRUE(entries.ok()) << entries.status();
  const UniqueFd fd = OpenDir(root);
  const TreeFileModes read_only{true, false};
  const auto check = [&] {
    return CheckFolderHolds(fd.get(), root, *entries, read_only, 2);
  };
  EXPECT_TRUE(check().ok()) << check();
  // Writable files are not a version's.
  EXPECT_TRUE(CheckFolderHolds(fd.get(), root, *entries, {}, 2).code() ==
              absl::StatusCode::kDataLoss);
  WriteFile(JoinPath(root, "d/planted"), "extra");
  EXPECT_THAT(check().message(), HasSubstr("d/planted is not in the tree"));
  ASSERT_EQ(unlink(JoinPath(root, "d/planted").c_str()), 0);
  ASSERT_EQ(chmod(JoinPath(root, "d/f").c_str(), 0644), 0);
  WriteFile(JoinPath(root, "d/f2"), "CONTENT", 0444);
  ASSERT_EQ(
      rename(JoinPath(root, "d/f2").c_str(), JoinPath(root, "d/f").c_str()), 0);
  EXPECT_THAT(check().message(), HasSubstr("d/f does not hold"));
  ASSERT_EQ(unlink(JoinPath(root, "l").c_str()), 0);
  EXPECT_THAT(check().message(), HasSubstr("l is missing"));
}

}  // namespace
}  // namespace verity
