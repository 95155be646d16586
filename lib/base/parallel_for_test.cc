#include "lib/base/parallel_for.h"

#include <atomic>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace verity {
namespace {

TEST(ParallelForTest, CallsEachIndexOnce) {
  std::vector<std::atomic<int>> calls(1000);
  ASSERT_TRUE(ParallelFor(calls.size(), 4, [&](size_t i) {
                calls[i]++;
                return absl::OkStatus();
              }).ok());
  for (const std::atomic<int>& count : calls) EXPECT_EQ(count.load(), 1);
}

TEST(ParallelForTest, NothingToDoIsOk) {
  EXPECT_TRUE(ParallelFor(0, 8, [](size_t) {
                return absl::InternalError("never called");
              }).ok());
}

TEST(ParallelForTest, RunsOnSeveralThreadsAtOnce) {
  // Two calls that each wait for the other can only end if they overlap.
  absl::Notification first, second;
  ASSERT_TRUE(ParallelFor(2, 2, [&](size_t i) {
                (i == 0 ? first : second).Notify();
                (i == 0 ? second : first).WaitForNotification();
                return absl::OkStatus();
              }).ok());
}

TEST(ParallelForTest, StopsAtTheFirstFailureAndReturnsIt) {
  std::atomic<size_t> calls{0};
  const absl::Status status = ParallelFor(1000, 1, [&](size_t i) {
    calls++;
    return i == 10 ? absl::DataLossError("item 10") : absl::OkStatus();
  });
  EXPECT_EQ(status, absl::DataLossError("item 10"));
  EXPECT_EQ(calls.load(), 11u);
}

TEST(ParallelForTest, ReturnsTheLowestFailedIndex) {
  // Both calls run at once (each waits for the other to start), both fail.
  absl::Notification first, second;
  const absl::Status status = ParallelFor(2, 2, [&](size_t i) {
    (i == 0 ? first : second).Notify();
    (i == 0 ? second : first).WaitForNotification();
    return absl::InternalError(i == 0 ? "zero" : "one");
  });
  EXPECT_EQ(status, absl::InternalError("zero"));
}

}  // namespace
}  // namespace verity
