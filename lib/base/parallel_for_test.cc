#include "lib/base/parallel_for.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
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

// On a shared executor: every index once, at most `window` at a time for
// each caller, however many callers share it; a failure as above.
TEST(ParallelForTest, OnAnExecutorBoundsEachCallersWindow) {
  ExecutorOptions options;
  options.threads = 4;
  Executor executor(options);
  constexpr int kCallers = 3;
  std::atomic<int> running[kCallers] = {};
  std::atomic<int> most[kCallers] = {};
  std::atomic<size_t> calls{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      const absl::Status status = ParallelFor(executor, 200, 2, [&](size_t) {
        const int now = ++running[c];
        int seen = most[c].load();
        while (now > seen && !most[c].compare_exchange_weak(seen, now)) {
        }
        absl::SleepFor(absl::Microseconds(200));
        --running[c];
        calls++;
        return absl::OkStatus();
      });
      EXPECT_TRUE(status.ok()) << status;
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(calls.load(), 600u);
  for (int c = 0; c < kCallers; ++c) EXPECT_LE(most[c].load(), 2);
  EXPECT_EQ(ParallelFor(executor, 100, 3,
                        [](size_t i) {
                          return i == 7 ? absl::DataLossError("item 7")
                                        : absl::OkStatus();
                        }),
            absl::DataLossError("item 7"));
}

}  // namespace
}  // namespace verity
