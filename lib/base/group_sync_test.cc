#include "lib/base/group_sync.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/testing/fsverity_cli.h"

namespace verity {
namespace {

// The real file system, whose syncfs can be held until the test lets it go,
// or fail.
class HeldSyncFileSystem final : public FileSystem {
 public:
  // The first syncfs waits for `release` once `entered` is notified.
  absl::Notification entered, release;
  std::atomic<bool> hold{false};
  std::atomic<int> fail_next{0};
  std::atomic<int> calls{0};

  absl::Status SyncFs(int fd, absl::string_view path) override {
    ++calls;
    if (hold.exchange(false)) {
      entered.Notify();
      release.WaitForNotification();
    }
    if (fail_next > 0) {
      --fail_next;
      return absl::DataLossError("writeback failed");
    }
    return PosixFileSystem().SyncFs(fd, path);
  }

  absl::StatusOr<UniqueFd> OpenAt(int dir_fd, const std::string& path,
                                  int flags, mode_t mode) override {
    return PosixFileSystem().OpenAt(dir_fd, path, flags, mode);
  }
  absl::StatusOr<size_t> Write(int fd, absl::Span<const uint8_t> data,
                               absl::string_view path) override {
    return PosixFileSystem().Write(fd, data, path);
  }
  absl::StatusOr<size_t> Pwrite(int fd, uint64_t offset,
                                absl::Span<const uint8_t> data,
                                absl::string_view path) override {
    return PosixFileSystem().Pwrite(fd, offset, data, path);
  }
  absl::StatusOr<size_t> Pread(int fd, uint64_t offset, absl::Span<uint8_t> out,
                               absl::string_view path) override {
    return PosixFileSystem().Pread(fd, offset, out, path);
  }
  absl::Status Fsync(int fd, absl::string_view path) override {
    return PosixFileSystem().Fsync(fd, path);
  }
  void StartWriteback(int fd, uint64_t offset, uint64_t length) override {}
  absl::Status Rename(const std::string& from, const std::string& to) override {
    return PosixFileSystem().Rename(from, to);
  }
  absl::Status Unlink(const std::string& path) override {
    return PosixFileSystem().Unlink(path);
  }
  absl::StatusOr<bool> MakeDir(const std::string& path) override {
    return PosixFileSystem().MakeDir(path);
  }
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& path) override {
    return PosixFileSystem().ListDir(path);
  }
  absl::Status RemoveRecursively(const std::string& path) override {
    return PosixFileSystem().RemoveRecursively(path);
  }
};

class GroupSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sync_ = *GroupSync::Create(fs_, FreshTestDir("group_sync"));
  }
  HeldSyncFileSystem fs_;
  std::unique_ptr<GroupSync> sync_;
};

TEST_F(GroupSyncTest, ACallerAloneRunsOneSyncfs) {
  EXPECT_TRUE(sync_->Sync(sync_->Mark()).ok());
  EXPECT_TRUE(sync_->Sync(sync_->Mark()).ok());
  EXPECT_EQ(fs_.calls, 2);
  EXPECT_EQ(sync_->syncs(), 2u);
}

TEST_F(GroupSyncTest, CallersThatArriveDuringASyncfsShareTheNext) {
  fs_.hold = true;
  std::thread first([&] { EXPECT_TRUE(sync_->Sync(sync_->Mark()).ok()); });
  fs_.entered.WaitForNotification();
  // These wrote after the running syncfs began: it does not cover them.
  constexpr int kWaiters = 8;
  std::atomic<int> done{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&] {
      EXPECT_TRUE(sync_->Sync(sync_->Mark()).ok());
      ++done;
    });
  }
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(done, 0);  // none returned on the running one
  fs_.release.Notify();
  first.join();
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(done, kWaiters);
  // The running one, then one for all eight.
  EXPECT_EQ(fs_.calls, 2);
}

TEST_F(GroupSyncTest, AFailedSyncfsFailsWritersMarkedBeforeIt) {
  const uint64_t before = sync_->Mark();
  fs_.fail_next = 1;
  EXPECT_EQ(sync_->Sync(sync_->Mark()).code(), absl::StatusCode::kDataLoss);
  // Its pages may have gone with the failure: a later success does not
  // make them durable.
  EXPECT_EQ(sync_->Sync(before).code(), absl::StatusCode::kDataLoss);
  // A writer that began after it is not affected.
  EXPECT_TRUE(sync_->Sync(sync_->Mark()).ok());
}

}  // namespace
}  // namespace verity
