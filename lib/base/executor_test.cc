// Executor runs every task off the caller's thread, in order per thread
// count, refuses tasks beyond its queue bound, and drains on destruction.

#include "lib/base/executor.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace verity {
namespace {

TEST(ExecutorTest, RunsTasksOnItsOwnThreads) {
  Executor executor;
  absl::Notification ran;
  std::thread::id where;
  ASSERT_TRUE(executor
                  .Submit([&] {
                    where = std::this_thread::get_id();
                    ran.Notify();
                  })
                  .ok());
  ran.WaitForNotification();
  EXPECT_NE(where, std::this_thread::get_id());
}

TEST(ExecutorTest, OneThreadRunsTasksInOrder) {
  std::vector<int> order;
  {
    ExecutorOptions options;
    options.threads = 1;
    Executor executor(options);
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(executor.Submit([&order, i] { order.push_back(i); }).ok());
    }
  }  // drains
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(ExecutorTest, RefusesTasksBeyondTheQueueBound) {
  ExecutorOptions options;
  options.threads = 1;
  options.max_queued = 3;
  std::atomic<int> ran{0};
  absl::Notification started, release;
  {
    Executor executor(options);
    ASSERT_TRUE(executor
                    .Submit([&] {
                      started.Notify();
                      release.WaitForNotification();
                      ++ran;
                    })
                    .ok());
    started.WaitForNotification();  // the thread is busy; the queue is empty
    for (int i = 0; i < 3; ++i) {
      EXPECT_TRUE(executor.Submit([&] { ++ran; }).ok());
    }
    auto dropped = std::make_shared<int>(0);
    const absl::Status refused = executor.Submit([dropped] { ++*dropped; });
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(dropped.use_count(), 1);  // the refused task was dropped
    release.Notify();
  }
  EXPECT_EQ(ran.load(), 4);
}

TEST(ExecutorTest, ManySubmittersManyThreads) {
  std::atomic<int> ran{0};
  {
    ExecutorOptions options;
    options.threads = 3;
    options.max_queued = 1 << 20;
    Executor executor(options);
    std::vector<std::thread> submitters;
    for (int t = 0; t < 4; ++t) {
      submitters.emplace_back([&] {
        for (int i = 0; i < 1000; ++i) {
          EXPECT_TRUE(executor.Submit([&ran] { ++ran; }).ok());
        }
      });
    }
    for (std::thread& submitter : submitters) submitter.join();
  }
  EXPECT_EQ(ran.load(), 4000);
}

}  // namespace
}  // namespace verity
