// RepairCoordinator with a stand-in repair that the test holds and releases:
// one repair per RS group however many reads wait for it, the most urgent
// group first, a queued group raised by an urgent waiter, and bounds.

#include "server/dispatch/repair_coordinator.h"

#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/store/file/testing/file_store.h"

namespace verity::server {
namespace {

constexpr uint64_t kBlock = 4096;

class RepairCoordinatorTest : public FileStoreFixture {
 protected:
  void SetUp() override {
    fec_roots_ = 4;
    FileStoreFixture::SetUp();
    // 1000 data blocks and 9 tree blocks: 5 RS groups of k = 251, block b
    // in group b % 5.
    digest_ = MustPut(MakeData(1000 * kBlock, 3));
    blob_ = Open();
    ASSERT_EQ(blob_->blob().fec_roots(), 4);
  }

  std::shared_ptr<VerifiedBlob> Open() {
    return *VerifiedBlob::Create(*store_->OpenBlob(DigestFromText(digest_)));
  }

  // What a read of data block `block` reports when it fails its check.
  absl::Status BadBlock(uint64_t block) {
    const absl::StatusOr<std::string> tree = ReadAllTree(blob_->blob());
    EXPECT_TRUE(tree.ok()) << tree.status();
    for (const TreeBlockId& id : blob_->MissingTree(block, block + 1)) {
      const uint64_t at = blob_->geometry().Ordinal(id) * kBlock;
      EXPECT_TRUE(
          blob_->AddTreeBlock(id, AsBytes(tree->substr(at, kBlock))).ok());
    }
    const std::string wrong(kBlock, 'x');
    return blob_->CheckDataBlock(block, AsBytes(wrong));
  }

  // A repair that records the block it was asked for, then waits until
  // released, and reports 1 block rebuilt.
  RepairCoordinator::RepairFn HeldRepair() {
    return [this](VerifiedBlob&, uint64_t bad) -> RepairCoordinator::Result {
      {
        absl::MutexLock lock(&mu_);
        started_.push_back(bad);
      }
      release_.WaitForNotification();
      return 1;
    };
  }

  // Waits until `n` repairs have started.
  void AwaitStarted(size_t n) {
    absl::MutexLock lock(&mu_);
    const auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return started_.size() >= n;
    };
    mu_.Await(absl::Condition(&enough));
  }

  std::vector<uint64_t> started() {
    absl::MutexLock lock(&mu_);
    return started_;
  }

  // A Done that counts itself and keeps the result.
  RepairCoordinator::Done Waiter() {
    return [this](const RepairCoordinator::Result& result) {
      absl::MutexLock lock(&mu_);
      results_.push_back(result);
    };
  }

  std::vector<RepairCoordinator::Result> results() {
    absl::MutexLock lock(&mu_);
    return results_;
  }

  std::string digest_;
  std::shared_ptr<VerifiedBlob> blob_;
  prometheus::Registry registry_;
  std::shared_ptr<DispatchMetrics> metrics_ =
      std::make_shared<DispatchMetrics>(registry_);
  absl::Notification release_;
  absl::Mutex mu_;
  std::vector<uint64_t> started_ ABSL_GUARDED_BY(mu_);
  std::vector<RepairCoordinator::Result> results_ ABSL_GUARDED_BY(mu_);
};

TEST_F(RepairCoordinatorTest, EightReadsOfOneGroupShareOneRepair) {
  {
    RepairCoordinator repairs({}, metrics_, HeldRepair());
    // Blocks 0 and 5 are of one group; the second VerifiedBlob of the
    // same blob shares it too.
    ASSERT_TRUE(
        repairs.Repair(blob_, BadBlock(0), PriorityClass::kBe, Waiter()).ok());
    AwaitStarted(1);
    std::shared_ptr<VerifiedBlob> other = Open();
    for (int i = 0; i < 7; ++i) {
      ASSERT_TRUE(repairs
                      .Repair(i % 2 ? other : blob_, BadBlock(i % 2 ? 5 : 0),
                              PriorityClass::kRt, Waiter())
                      .ok());
    }
    EXPECT_TRUE(results().empty());
    release_.Notify();
  }
  EXPECT_EQ(started(), std::vector<uint64_t>{0});
  ASSERT_EQ(results().size(), 8u);
  for (const RepairCoordinator::Result& result : results()) {
    EXPECT_EQ(*result, 1);
  }
  EXPECT_EQ(metrics_->fec_repairs(), 1u);
  EXPECT_EQ(metrics_->fec_repair_joins(), 7u);
  EXPECT_EQ(metrics_->fec_repaired_blocks(), 1u);
}

TEST_F(RepairCoordinatorTest, MostUrgentGroupFirstAndAnRtWaiterRaisesItsGroup) {
  {
    RepairCoordinatorOptions options;
    options.threads = 1;
    options.order = {absl::InfiniteDuration(), absl::InfiniteDuration()};
    RepairCoordinator repairs(options, metrics_, HeldRepair());
    // Group 0 holds the one thread; then groups 1 (IDLE), 2 (BE), 3 (IDLE,
    // then an RT read joins it) and 4 (NONE, served as BE) queue.
    ASSERT_TRUE(
        repairs.Repair(blob_, BadBlock(0), PriorityClass::kIdle, Waiter())
            .ok());
    AwaitStarted(1);
    for (const auto& [block, priority] :
         std::vector<std::pair<uint64_t, PriorityClass>>{
             {1, PriorityClass::kIdle},
             {2, PriorityClass::kBe},
             {3, PriorityClass::kIdle},
             {8, PriorityClass::kRt},  // group 3
             {4, PriorityClass::kNone}}) {
      ASSERT_TRUE(
          repairs.Repair(blob_, BadBlock(block), priority, Waiter()).ok());
    }
    release_.Notify();
  }
  // Block 3's group, raised by block 8's RT read, runs once, for block 3.
  EXPECT_EQ(started(), (std::vector<uint64_t>{0, 3, 2, 4, 1}));
  EXPECT_EQ(results().size(), 6u);
  EXPECT_EQ(metrics_->fec_repairs(), 5u);
}

TEST_F(RepairCoordinatorTest, BoundedGroupsAndBadInput) {
  RepairCoordinatorOptions options;
  options.threads = 1;
  options.max_groups = 2;
  RepairCoordinator repairs(options, metrics_, HeldRepair());
  ASSERT_TRUE(
      repairs.Repair(blob_, BadBlock(0), PriorityClass::kBe, Waiter()).ok());
  ASSERT_TRUE(
      repairs.Repair(blob_, BadBlock(1), PriorityClass::kBe, Waiter()).ok());
  EXPECT_EQ(
      repairs.Repair(blob_, BadBlock(2), PriorityClass::kRt, Waiter()).code(),
      absl::StatusCode::kResourceExhausted);
  // Joining a group queued or under way is not one more.
  EXPECT_TRUE(
      repairs.Repair(blob_, BadBlock(6), PriorityClass::kRt, Waiter()).ok());
  EXPECT_EQ(repairs
                .Repair(blob_, absl::DataLossError("no block named"),
                        PriorityClass::kBe, Waiter())
                .code(),
            absl::StatusCode::kInvalidArgument);
  release_.Notify();
}

// With the real repair: a group is repaired once, and a read that asks again
// after it finished finds the block good (0 rebuilt).
TEST_F(RepairCoordinatorTest, TheRealRepairAndOneAfterIt) {
  FlipStoredDataBit(digest_, 7 * kBlock + 100);
  const absl::Status bad = BadBlock(7);
  {
    RepairCoordinator repairs({}, metrics_);
    ASSERT_TRUE(repairs.Repair(Open(), bad, PriorityClass::kBe, Waiter()).ok());
  }
  {
    RepairCoordinator repairs({}, metrics_);
    ASSERT_TRUE(repairs.Repair(Open(), bad, PriorityClass::kBe, Waiter()).ok());
  }
  ASSERT_EQ(results().size(), 2u);
  EXPECT_EQ(*results()[0], 1);
  EXPECT_EQ(*results()[1], 0);
  EXPECT_EQ(metrics_->fec_repairs(), 2u);
  EXPECT_EQ(metrics_->fec_repaired_blocks(), 1u);
}

}  // namespace
}  // namespace verity::server
