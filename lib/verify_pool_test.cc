// Tests the verification pool from inside its tasks: pinning, the priority
// obtained, class order per worker, queue_wait, draining on destruction and
// concurrent submits. Passes with or without privileges, on 1 CPU or more.

#include "lib/verify_pool.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/priority_class.h"

namespace verity {
namespace {

using ::testing::ElementsAre;
using Mode = VerifyPoolOptions::Mode;

std::vector<int> ThreadAffinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

int ThreadNice() { return getpriority(PRIO_PROCESS, gettid()); }

std::string ThreadName() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

// Whether a new thread of this process may use SCHED_FIFO: root, unless a
// container or the RT cgroup budget says otherwise.
bool CanUseFifo() {
  bool permitted = false;
  std::thread probe([&permitted] {
    sched_param param = {};
    param.sched_priority = 1;
    permitted = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
  });
  probe.join();
  return permitted;
}

std::unique_ptr<VerifyPool> MakePool(const VerifyPoolOptions& options) {
  absl::StatusOr<std::unique_ptr<VerifyPool>> pool =
      VerifyPool::Create(options);
  EXPECT_TRUE(pool.ok()) << pool.status();
  if (!pool.ok()) return nullptr;
  ::testing::Test::RecordProperty("scheduling",
                                  (*pool)->scheduling().ToString());
  return *std::move(pool);
}

VerifyPoolOptions WithMode(Mode mode) {
  VerifyPoolOptions options;
  options.mode = mode;
  return options;
}

// Runs `fn` on the pool and waits for it to finish.
template <typename Fn>
void RunOnPool(VerifyPool& pool, int cpu, Fn fn) {
  absl::Notification done;
  pool.Submit(cpu, PriorityClass::kBe, [&](absl::Duration) {
    fn();
    done.Notify();
  });
  done.WaitForNotification();
}

// Keeps the worker serving `cpu` busy until Release() or destruction.
class Blocker {
 public:
  Blocker(VerifyPool& pool, int cpu)
      : release_(std::make_shared<absl::Notification>()) {
    absl::Notification started;
    pool.Submit(cpu, PriorityClass::kRt,
                [&started, release = release_](absl::Duration) {
                  started.Notify();
                  release->WaitForNotification();
                });
    started.WaitForNotification();
  }
  ~Blocker() { Release(); }
  void Release() {
    if (!release_->HasBeenNotified()) release_->Notify();
  }

 private:
  std::shared_ptr<absl::Notification> release_;
};

TEST(VerifyPoolTest, CurrentCpuIsInTheMask) {
  EXPECT_THAT(ThreadAffinity(), testing::Contains(CurrentCpu()));
}

TEST(VerifyPoolTest, RejectsBadOptions) {
  VerifyPoolOptions options;
  options.threads = -1;
  EXPECT_EQ(VerifyPool::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = {};
  options.threads = static_cast<int>(ThreadAffinity().size()) + 1;
  EXPECT_EQ(VerifyPool::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = {};
  options.fifo_priority = 0;
  EXPECT_EQ(VerifyPool::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = {};
  options.aging.be_delay = -absl::Milliseconds(1);
  EXPECT_EQ(VerifyPool::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(VerifyPoolTest, PinnedWorkersRunOnTheirCpu) {
  std::unique_ptr<VerifyPool> pool = MakePool({});
  ASSERT_NE(pool, nullptr);
  const PoolScheduling& scheduling = pool->scheduling();
  EXPECT_TRUE(scheduling.pinned);
  EXPECT_EQ(scheduling.cpus, ThreadAffinity());
  EXPECT_EQ(scheduling.threads, static_cast<int>(scheduling.cpus.size()));
  for (int cpu : scheduling.cpus) {
    std::vector<int> affinity;
    int ran_on = -1;
    std::string name;
    RunOnPool(*pool, cpu, [&] {
      affinity = ThreadAffinity();
      ran_on = sched_getcpu();
      name = ThreadName();
    });
    EXPECT_THAT(affinity, ElementsAre(cpu));
    EXPECT_EQ(ran_on, cpu);
    EXPECT_EQ(name, absl::StrCat("verify/", cpu));
  }
}

TEST(VerifyPoolTest, CpuWithoutWorkerMapsToOneWorker) {
  std::unique_ptr<VerifyPool> pool = MakePool({});
  ASSERT_NE(pool, nullptr);
  for (int cpu : {-1, 4095}) {
    std::vector<int> first, second;
    RunOnPool(*pool, cpu, [&] { first = ThreadAffinity(); });
    RunOnPool(*pool, cpu, [&] { second = ThreadAffinity(); });
    ASSERT_EQ(first.size(), 1u);
    EXPECT_THAT(pool->scheduling().cpus, testing::Contains(first[0]));
    EXPECT_EQ(first, second);
  }
}

TEST(VerifyPoolTest, UnboundWorkersMayRunAnywhere) {
  VerifyPoolOptions options = WithMode(Mode::kUnbound);
  options.threads = 3;
  std::unique_ptr<VerifyPool> pool = MakePool(options);
  ASSERT_NE(pool, nullptr);
  EXPECT_FALSE(pool->scheduling().pinned);
  EXPECT_EQ(pool->scheduling().threads, 3);
  EXPECT_EQ(pool->scheduling().cpus, ThreadAffinity());
  std::vector<int> affinity;
  std::string name;
  RunOnPool(*pool, 0, [&] {
    affinity = ThreadAffinity();
    name = ThreadName();
  });
  EXPECT_EQ(affinity, ThreadAffinity());
  EXPECT_THAT(name, testing::StartsWith("verify-u/"));
}

TEST(VerifyPoolTest, TasksRunWithTheReportedPriority) {
  const bool fifo = CanUseFifo();
  for (Mode mode : {Mode::kPinned, Mode::kUnbound}) {
    std::unique_ptr<VerifyPool> pool = MakePool(WithMode(mode));
    ASSERT_NE(pool, nullptr);
    const PoolScheduling& scheduling = pool->scheduling();
    int policy = -1, priority = -100;
    RunOnPool(*pool, 0, [&] {
      policy = sched_getscheduler(0);
      sched_param param = {};
      sched_getparam(0, &param);
      priority = policy == SCHED_FIFO ? param.sched_priority : ThreadNice();
    });
    EXPECT_EQ(scheduling.policy, fifo ? "SCHED_FIFO" : "SCHED_OTHER");
    EXPECT_EQ(policy, fifo ? SCHED_FIFO : SCHED_OTHER);
    EXPECT_EQ(priority, scheduling.priority);
    if (fifo) {
      EXPECT_EQ(priority, 1);
    } else {
      EXPECT_LE(priority, ThreadNice());  // never worse than inherited
    }
  }
}

TEST(VerifyPoolTest, WithoutRaisingWorkersKeepInheritedScheduling) {
  VerifyPoolOptions options;
  options.raise_priority = false;
  std::unique_ptr<VerifyPool> pool = MakePool(options);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->scheduling().policy, "SCHED_OTHER");
  EXPECT_EQ(pool->scheduling().priority, ThreadNice());
  int policy = -1, nice = -100;
  RunOnPool(*pool, 0, [&] {
    policy = sched_getscheduler(0);
    nice = ThreadNice();
  });
  EXPECT_EQ(policy, SCHED_OTHER);
  EXPECT_EQ(nice, ThreadNice());
}

class Recorder {
 public:
  void Add(absl::string_view name) {
    absl::MutexLock lock(&mu_);
    names_.emplace_back(name);
  }
  std::vector<std::string> Get() const {
    absl::MutexLock lock(&mu_);
    return names_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> names_ ABSL_GUARDED_BY(mu_);
};

// Blocks one worker, submits one task per class to it, and returns the order
// they ran in.
std::vector<std::string> RunOrder(VerifyPoolOptions options) {
  std::unique_ptr<VerifyPool> pool = MakePool(options);
  if (pool == nullptr) return {};
  const int cpu = pool->scheduling().cpus[0];
  Recorder recorder;
  {
    Blocker blocker(*pool, cpu);
    for (PriorityClass c : {PriorityClass::kIdle, PriorityClass::kBe,
                            PriorityClass::kRt, PriorityClass::kNone}) {
      pool->Submit(cpu, c, [&recorder, c](absl::Duration) {
        recorder.Add(PriorityClassName(c));
      });
    }
    EXPECT_EQ(pool->queued(), 4u);
  }
  pool.reset();  // runs them all
  return recorder.Get();
}

TEST(VerifyPoolTest, PinnedWorkerRunsByClass) {
  VerifyPoolOptions options;
  // Aging is ClassQueue's to test; here no preemption may age anything.
  options.aging = {absl::Seconds(100), absl::Seconds(200)};
  EXPECT_THAT(RunOrder(options), ElementsAre("rt", "be", "none", "idle"));
}

TEST(VerifyPoolTest, UnboundRunsInSubmitOrder) {
  VerifyPoolOptions options = WithMode(Mode::kUnbound);
  options.threads = 1;  // one consumer, so run order is queue order
  EXPECT_THAT(RunOrder(options), ElementsAre("idle", "be", "rt", "none"));
}

TEST(VerifyPoolTest, QueueWaitCoversTheBlockedTime) {
  std::unique_ptr<VerifyPool> pool = MakePool({});
  ASSERT_NE(pool, nullptr);
  const int cpu = pool->scheduling().cpus[0];
  Blocker blocker(*pool, cpu);
  absl::Notification done;
  absl::Duration wait;
  pool->Submit(cpu, PriorityClass::kBe, [&](absl::Duration queue_wait) {
    wait = queue_wait;
    done.Notify();
  });
  const absl::Time blocked = absl::Now();
  EXPECT_EQ(pool->queued(), 1u);
  absl::SleepFor(absl::Milliseconds(50));
  const absl::Duration blocked_for = absl::Now() - blocked;
  blocker.Release();
  done.WaitForNotification();
  EXPECT_GE(wait, blocked_for);
  EXPECT_EQ(pool->queued(), 0u);
}

TEST(VerifyPoolTest, DestructorRunsQueuedTasks) {
  constexpr int kTasks = 1000;
  for (Mode mode : {Mode::kPinned, Mode::kUnbound}) {
    std::atomic<int> ran{0};
    std::unique_ptr<VerifyPool> pool = MakePool(WithMode(mode));
    ASSERT_NE(pool, nullptr);
    const int cpu = pool->scheduling().cpus[0];
    auto blocker = std::make_unique<Blocker>(*pool, cpu);
    for (int i = 0; i < kTasks; ++i) {
      pool->Submit(cpu, kAllPriorityClasses[i % kNumPriorityClasses],
                   [&ran](absl::Duration) { ++ran; });
    }
    // Usually releases the worker while the destructor is waiting for it.
    std::thread releaser([&blocker] {
      absl::SleepFor(absl::Milliseconds(20));
      blocker->Release();
    });
    pool.reset();
    releaser.join();
    EXPECT_EQ(ran.load(), kTasks);
  }
}

TEST(VerifyPoolTest, ConcurrentSubmitsLoseNothing) {
  constexpr int kThreads = 4;
  constexpr int kTasksPerThread = 10000;
  for (Mode mode : {Mode::kPinned, Mode::kUnbound}) {
    std::atomic<int> ran{0};
    std::unique_ptr<VerifyPool> pool = MakePool(WithMode(mode));
    ASSERT_NE(pool, nullptr);
    std::vector<std::thread> submitters;
    for (int t = 0; t < kThreads; ++t) {
      submitters.emplace_back([&pool, &ran] {
        for (int i = 0; i < kTasksPerThread; ++i) {
          pool->Submit(CurrentCpu(),
                       kAllPriorityClasses[i % kNumPriorityClasses],
                       [&ran](absl::Duration) { ++ran; });
        }
      });
    }
    for (std::thread& submitter : submitters) submitter.join();
    pool.reset();
    EXPECT_EQ(ran.load(), kThreads * kTasksPerThread);
  }
}

TEST(VerifyPoolTest, SchedulingToString) {
  PoolScheduling scheduling{"SCHED_FIFO", 1, true, 2, {0, 1}};
  EXPECT_EQ(scheduling.ToString(),
            "2 threads pinned to CPUs 0,1, SCHED_FIFO priority 1");
  scheduling = {"SCHED_OTHER", -20, false, 1, {3}};
  EXPECT_EQ(scheduling.ToString(),
            "1 thread unpinned on CPU 3, SCHED_OTHER nice -20");
}

}  // namespace
}  // namespace verity
