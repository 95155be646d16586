// ReadJoin runs its completion once, after the last report, with the first
// error.

#include "server/store/read_join.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(ReadJoinTest, CompletesAfterTheLastReportWithTheFirstError) {
  int runs = 0;
  absl::Status seen;
  auto join = ReadJoin::Create(3, [&](absl::Status status) {
    ++runs;
    seen = status;
  });
  join->Report(absl::OkStatus());
  join->Report(absl::DataLossError("first"));
  EXPECT_EQ(runs, 0);
  join->Report(absl::UnavailableError("second"));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(seen, absl::DataLossError("first"));
}

TEST(ReadJoinTest, ReportsFromManyThreadsCompleteOnce) {
  std::atomic<int> runs{0};
  constexpr int kReads = 64;
  auto join = ReadJoin::Create(kReads, [&](absl::Status status) {
    EXPECT_TRUE(status.ok());
    ++runs;
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < kReads; ++i) {
    threads.emplace_back([join] { join->Report(absl::OkStatus()); });
  }
  join.reset();  // the reports keep it alive
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(runs.load(), 1);
}

}  // namespace
}  // namespace verity::server
