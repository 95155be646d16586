// Tests FaultFileSystem: that it fails the calls it is told to, and that a
// power cut keeps exactly what fsync made durable.

#include "server/store/file/testing/fault_file_system.h"

#include <fcntl.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/file_system.h"
#include "lib/base/file_util.h"
#include "lib/hash/hash.h"
#include "server/store/file/testing/file_store.h"

namespace verity::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class FaultFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FreshTestDir();
    ASSERT_TRUE(fs_.TrackDurability(root_).ok());
  }

  // Creates `name` in the root holding `bytes`; fsyncs the file if `sync`.
  void Create(const std::string& name, absl::string_view bytes, bool sync) {
    const std::string path = JoinPath(root_, name);
    absl::StatusOr<UniqueFd> fd =
        OpenFile(fs_, path, O_WRONLY | O_CREAT | O_EXCL);
    ASSERT_TRUE(fd.ok()) << fd.status();
    ASSERT_TRUE(WriteAll(fs_, fd->get(), AsBytes(bytes), path).ok());
    if (sync) {
      ASSERT_TRUE(fs_.Fsync(fd->get(), path).ok());
    }
  }

  void SyncRoot() { ASSERT_TRUE(FsyncDir(fs_, root_).ok()); }

  std::string root_;
  FaultFileSystem fs_;
};

TEST_F(FaultFileSystemTest, FailsTheNthMatchingCall) {
  const std::string a = JoinPath(root_, "a");
  const std::string b = JoinPath(root_, "b");
  fs_.Inject(Fault{FileOp::kWrite, 2, false, b, ENOSPC});
  UniqueFd fa = OpenFile(fs_, a, O_WRONLY | O_CREAT).value();
  UniqueFd fb = OpenFile(fs_, b, O_WRONLY | O_CREAT).value();
  EXPECT_TRUE(fs_.Write(fb.get(), AsBytes("1"), b).ok());
  EXPECT_TRUE(fs_.Write(fa.get(), AsBytes("1"), a).ok());
  const absl::Status full = fs_.Write(fb.get(), AsBytes("2"), b).status();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted) << full;
  EXPECT_TRUE(fs_.Write(fb.get(), AsBytes("3"), b).ok());
  EXPECT_EQ(ReadWholeFile(b).value(), "13");
  EXPECT_EQ(fs_.calls(), 6);
  EXPECT_EQ(fs_.CallName(5), "write " + b);
}

TEST_F(FaultFileSystemTest, AndAfterKeepsFailing) {
  fs_.Inject(Fault{FileOp::kMkdir, 2, true, "", EIO});
  EXPECT_TRUE(fs_.MakeDir(JoinPath(root_, "1")).ok());
  EXPECT_FALSE(fs_.MakeDir(JoinPath(root_, "2")).ok());
  EXPECT_FALSE(fs_.MakeDir(JoinPath(root_, "3")).ok());
  fs_.Reset();
  EXPECT_TRUE(fs_.MakeDir(JoinPath(root_, "4")).ok());
  EXPECT_THAT(EntriesOf(root_), ElementsAre("1", "4"));
}

TEST_F(FaultFileSystemTest, ShortWritesAndReadsStillComplete) {
  fs_.Inject(Fault{FileOp::kWrite, 0, false, "", 0, /*short_transfer=*/true});
  fs_.Inject(Fault{FileOp::kPread, 0, false, "", 0, /*short_transfer=*/true});
  const std::string data = MakeData(10000, 1);
  Create("f", data, false);
  EXPECT_GT(fs_.calls(), 10);  // halving each time
  UniqueFd fd = OpenFile(fs_, JoinPath(root_, "f"), O_RDONLY).value();
  std::string back(data.size(), '\0');
  EXPECT_EQ(PreadUpTo(fs_, fd.get(), 0, AsMutableBytes(&back), "f").value(),
            data.size());
  EXPECT_EQ(back, data);
}

TEST_F(FaultFileSystemTest, NothingRunsAfterTheCrashPoint) {
  fs_.CrashAtCall(2);
  EXPECT_TRUE(fs_.MakeDir(JoinPath(root_, "before")).ok());
  EXPECT_FALSE(fs_.crashed());
  EXPECT_FALSE(fs_.MakeDir(JoinPath(root_, "at")).ok());
  EXPECT_TRUE(fs_.crashed());
  EXPECT_FALSE(fs_.ListDir(root_).ok());
  EXPECT_THAT(EntriesOf(root_), ElementsAre("before"));
}

TEST_F(FaultFileSystemTest, PowerCutKeepsOnlyWhatWasSynced) {
  Create("synced", "kept", true);
  Create("unsynced", "lost", false);
  SyncRoot();
  Create("unlinked", "lost", true);  // its directory is not synced
  ASSERT_TRUE(fs_.DropUnsynced().ok());
  EXPECT_THAT(EntriesOf(root_), ElementsAre("synced", "unsynced"));
  EXPECT_EQ(ReadWholeFile(JoinPath(root_, "synced")).value(), "kept");
  EXPECT_EQ(ReadWholeFile(JoinPath(root_, "unsynced")).value(), "");
}

TEST_F(FaultFileSystemTest, RenameLastsOnlyOnceItsDirectoriesAreSynced) {
  ASSERT_TRUE(fs_.MakeDir(JoinPath(root_, "dir")).ok());
  Create("file", "bytes", true);
  SyncRoot();
  ASSERT_TRUE(
      fs_.Rename(JoinPath(root_, "file"), JoinPath(root_, "dir/file")).ok());
  ASSERT_TRUE(fs_.DropUnsynced().ok());
  EXPECT_THAT(EntriesOf(root_), ElementsAre("dir", "file"));
  EXPECT_THAT(EntriesOf(JoinPath(root_, "dir")), IsEmpty());

  ASSERT_TRUE(
      fs_.Rename(JoinPath(root_, "file"), JoinPath(root_, "dir/file")).ok());
  ASSERT_TRUE(FsyncDir(fs_, JoinPath(root_, "dir")).ok());
  SyncRoot();
  ASSERT_TRUE(fs_.DropUnsynced().ok());
  EXPECT_THAT(EntriesOf(root_), ElementsAre("dir"));
  EXPECT_EQ(ReadWholeFile(JoinPath(root_, "dir/file")).value(), "bytes");
}

TEST_F(FaultFileSystemTest, FailedFsyncMakesNothingDurable) {
  fs_.Inject(Fault{FileOp::kFsync, 1, false, "", EIO});
  const std::string path = JoinPath(root_, "f");
  UniqueFd fd = OpenFile(fs_, path, O_WRONLY | O_CREAT | O_EXCL).value();
  ASSERT_TRUE(WriteAll(fs_, fd.get(), AsBytes("x"), path).ok());
  EXPECT_EQ(fs_.Fsync(fd.get(), path).code(), absl::StatusCode::kInternal);
  SyncRoot();
  ASSERT_TRUE(fs_.DropUnsynced().ok());
  EXPECT_EQ(ReadWholeFile(path).value(), "");
}

}  // namespace
}  // namespace verity::server
