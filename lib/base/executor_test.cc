// Executor runs every task off the caller's thread, in order per thread
// count, refuses tasks beyond its queue bound, and drains on destruction,
// even when its last owner lets go inside one of its tasks.

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

// A shared Executor whose last owner is a task of its own: destroyed on one
// of its threads, it joins the others (which drain the queue), and the
// thread it ran on finishes what is left, then ends on its own.
TEST(ExecutorTest, TheLastOwnerMayLetGoInsideATask) {
  for (int threads : {1, 2}) {
    ExecutorOptions options;
    options.threads = threads;
    auto executor = std::make_shared<Executor>(options);
    std::atomic<int> ran{0};
    absl::Notification hold, gone, all_ran;
    Executor* raw = executor.get();
    ASSERT_TRUE(raw->Submit([&hold] { hold.WaitForNotification(); }).ok());
    ASSERT_TRUE(raw->Submit([executor = std::move(executor), &gone]() mutable {
                     executor.reset();
                     gone.Notify();
                   })
                    .ok());
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(raw->Submit([&ran, &all_ran] {
                       if (++ran == 10) all_ran.Notify();
                     })
                      .ok());
    }
    hold.Notify();
    gone.WaitForNotification();
    all_ran.WaitForNotification();
    EXPECT_EQ(ran.load(), 10) << threads << " thread(s)";
  }
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
