// Tests the verification pool from inside its tasks: pinning, the scheduling
// band each class runs at and priority inheritance between bands, class order
// per worker, queue_wait, draining on destruction and concurrent submits.
// Passes with or without privileges, on 1 CPU or more.

#include "server/dispatch/verify_pool.h"

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
#include "lib/base/priority_class.h"

namespace verity::server {
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

// Runs `fn` on a new thread, scheduled as the pool's workers start.
template <typename Fn>
void OnNewThread(Fn fn) {
  std::thread thread(fn);
  thread.join();
}

// Whether a new thread of this process may use SCHED_FIFO: root, unless a
// container or the RT cgroup budget says otherwise.
bool CanUseFifo() {
  bool permitted = false;
  OnNewThread([&permitted] {
    sched_param param = {};
    param.sched_priority = 1;
    permitted = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
  });
  return permitted;
}

// Whether a new thread may go to SCHED_IDLE and come back: CAP_SYS_NICE in
// the initial user namespace, so not in Bazel's sandbox even as root.
bool CanLeaveSchedIdle() {
  bool permitted = false;
  OnNewThread([&permitted] {
    sched_param param = {};
    permitted = sched_setscheduler(0, SCHED_IDLE, &param) == 0 &&
                sched_setscheduler(0, SCHED_OTHER, &param) == 0;
  });
  return permitted;
}

std::string PolicyName(int policy) {
  switch (policy) {
    case SCHED_FIFO:
      return "SCHED_FIFO";
    case SCHED_OTHER:
      return "SCHED_OTHER";
    case SCHED_IDLE:
      return "SCHED_IDLE";
  }
  return absl::StrCat("SCHED_", policy);
}

// Thread `tid`'s scheduling (0: the caller's) as "<policy> <priority>", the
// priority being the real-time one, the nice value, or 0 for SCHED_IDLE.
std::string SchedulingOf(pid_t tid = 0) {
  const int policy = sched_getscheduler(tid);
  sched_param param = {};
  sched_getparam(tid, &param);
  int priority = 0;
  if (policy == SCHED_FIFO || policy == SCHED_RR) {
    priority = param.sched_priority;
  } else if (policy != SCHED_IDLE) {
    priority = getpriority(PRIO_PROCESS, tid == 0 ? gettid() : tid);
  }
  return absl::StrCat(PolicyName(policy), " ", priority);
}

// The bands the pool reports, in SchedulingOf()'s format.
std::string RtBand(const PoolScheduling& s) {
  return absl::StrCat(s.policy, " ", s.priority);
}
std::string BeBand(const PoolScheduling& s) {
  return absl::StrCat(s.be_policy, " ", s.be_priority);
}
std::string IdleBand(const PoolScheduling& s) {
  return absl::StrCat(s.idle_policy, " ", s.idle_priority);
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

// Runs `fn` on the pool as `priority_class` work and waits for it to finish.
template <typename Fn>
void RunOnPool(VerifyPool& pool, int cpu, Fn fn,
               PriorityClass priority_class = PriorityClass::kBe) {
  absl::Notification done;
  pool.Submit(cpu, priority_class, [&](absl::Duration) {
    fn();
    done.Notify();
  });
  done.WaitForNotification();
}

// The scheduling a task of `priority_class` runs at, alone on the pool.
std::string TaskScheduling(VerifyPool& pool, PriorityClass priority_class) {
  std::string scheduling;
  RunOnPool(
      pool, 0, [&] { scheduling = SchedulingOf(); }, priority_class);
  return scheduling;
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

TEST(VerifyPoolTest, PinnedTasksRunAtTheirClassBand) {
  const std::string inherited = SchedulingOf();
  std::unique_ptr<VerifyPool> pool = MakePool({});
  ASSERT_NE(pool, nullptr);
  const PoolScheduling& scheduling = pool->scheduling();
  EXPECT_TRUE(scheduling.class_bands);
  if (CanUseFifo()) {
    EXPECT_EQ(RtBand(scheduling), "SCHED_FIFO 1");
  } else {
    EXPECT_EQ(scheduling.policy, "SCHED_OTHER");
    EXPECT_LE(scheduling.priority, ThreadNice());  // never worse than inherited
  }
  EXPECT_EQ(BeBand(scheduling), inherited);
  EXPECT_EQ(IdleBand(scheduling),
            CanLeaveSchedIdle() ? "SCHED_IDLE 0" : inherited);
  EXPECT_EQ(TaskScheduling(*pool, PriorityClass::kRt), RtBand(scheduling));
  EXPECT_EQ(TaskScheduling(*pool, PriorityClass::kBe), BeBand(scheduling));
  EXPECT_EQ(TaskScheduling(*pool, PriorityClass::kNone), BeBand(scheduling));
  EXPECT_EQ(TaskScheduling(*pool, PriorityClass::kIdle), IdleBand(scheduling));
  EXPECT_EQ(TaskScheduling(*pool, PriorityClass::kRt), RtBand(scheduling));
}

// Unbound mode, and pinned mode without class bands: the old behaviour.
TEST(VerifyPoolTest, WithoutBandsEveryClassRunsRaised) {
  const bool fifo = CanUseFifo();
  VerifyPoolOptions pinned;
  pinned.class_bands = false;
  for (const VerifyPoolOptions& options : {pinned, WithMode(Mode::kUnbound)}) {
    std::unique_ptr<VerifyPool> pool = MakePool(options);
    ASSERT_NE(pool, nullptr);
    const PoolScheduling& scheduling = pool->scheduling();
    EXPECT_FALSE(scheduling.class_bands);
    EXPECT_EQ(scheduling.policy, fifo ? "SCHED_FIFO" : "SCHED_OTHER");
    if (fifo) {
      EXPECT_EQ(scheduling.priority, 1);
    }
    EXPECT_EQ(BeBand(scheduling), RtBand(scheduling));
    EXPECT_EQ(IdleBand(scheduling), RtBand(scheduling));
    for (PriorityClass c : kAllPriorityClasses) {
      EXPECT_EQ(TaskScheduling(*pool, c), RtBand(scheduling))
          << PriorityClassName(c);
    }
  }
}

TEST(VerifyPoolTest, WithoutRaisingWorkersKeepInheritedScheduling) {
  const std::string inherited = SchedulingOf();
  VerifyPoolOptions options;
  options.raise_priority = false;
  std::unique_ptr<VerifyPool> pool = MakePool(options);
  ASSERT_NE(pool, nullptr);
  const PoolScheduling& scheduling = pool->scheduling();
  EXPECT_EQ(RtBand(scheduling), inherited);
  EXPECT_EQ(BeBand(scheduling), inherited);
  EXPECT_EQ(IdleBand(scheduling),
            CanLeaveSchedIdle() ? "SCHED_IDLE 0" : inherited);
  EXPECT_EQ(TaskScheduling(*pool, PriorityClass::kRt), inherited);
  EXPECT_EQ(TaskScheduling(*pool, PriorityClass::kBe), inherited);
  EXPECT_EQ(TaskScheduling(*pool, PriorityClass::kIdle), IdleBand(scheduling));
}

// What a task saw: its worker's thread id and its own scheduling as it
// started and as it ended.
struct Seen {
  pid_t tid = 0;
  std::string at_start;
  std::string at_end;
};

// Submits a task that records what it sees into `seen`, first waiting for
// `release` if given, and notifies `started` (if given) once it runs.
void SubmitObserver(VerifyPool& pool, int cpu, PriorityClass priority_class,
                    Seen& seen, absl::Notification* started = nullptr,
                    absl::Notification* release = nullptr) {
  pool.Submit(cpu, priority_class, [=, &seen](absl::Duration) {
    seen.tid = gettid();
    seen.at_start = SchedulingOf();
    if (started != nullptr) started->Notify();
    if (release != nullptr) release->WaitForNotification();
    seen.at_end = SchedulingOf();
  });
}

TEST(VerifyPoolTest, QueuedUrgentWorkRaisesTheRunningBand) {
  VerifyPoolOptions options;
  options.aging = {absl::Seconds(100), absl::Seconds(200)};  // class order
  std::unique_ptr<VerifyPool> pool = MakePool(options);
  ASSERT_NE(pool, nullptr);
  // A copy: the checks below run after the pool is gone.
  const PoolScheduling scheduling = pool->scheduling();
  const int cpu = scheduling.cpus[0];
  absl::Notification started, release;
  Seen idle, idle_after, be, rt;
  SubmitObserver(*pool, cpu, PriorityClass::kIdle, idle, &started, &release);
  started.WaitForNotification();
  EXPECT_EQ(idle.at_start, IdleBand(scheduling));
  SubmitObserver(*pool, cpu, PriorityClass::kIdle, idle_after);
  EXPECT_EQ(SchedulingOf(idle.tid), IdleBand(scheduling));
  SubmitObserver(*pool, cpu, PriorityClass::kBe, be);
  EXPECT_EQ(SchedulingOf(idle.tid), BeBand(scheduling));  // still in IDLE
  SubmitObserver(*pool, cpu, PriorityClass::kRt, rt);
  EXPECT_EQ(SchedulingOf(idle.tid), RtBand(scheduling));  // still in IDLE
  release.Notify();
  pool.reset();  // runs RT, BE, then IDLE
  EXPECT_EQ(idle.at_end, RtBand(scheduling));
  EXPECT_EQ(rt.tid, idle.tid);
  EXPECT_EQ(rt.at_start, RtBand(scheduling));            // BE and IDLE wait
  EXPECT_EQ(be.at_start, BeBand(scheduling));            // IDLE waits
  EXPECT_EQ(idle_after.at_start, IdleBand(scheduling));  // alone: back down
}

TEST(VerifyPoolTest, AgedIdleWorkRunsAtTheBandOfWaitingRtWork) {
  VerifyPoolOptions options;
  options.aging = ClassQueueOptions::Fifo();  // every item aged at once
  std::unique_ptr<VerifyPool> pool = MakePool(options);
  ASSERT_NE(pool, nullptr);
  const PoolScheduling scheduling = pool->scheduling();  // outlives the pool
  const int cpu = scheduling.cpus[0];
  Seen aged, rt, last;
  {
    Blocker blocker(*pool, cpu);
    SubmitObserver(*pool, cpu, PriorityClass::kIdle, aged);
    SubmitObserver(*pool, cpu, PriorityClass::kRt, rt);
    SubmitObserver(*pool, cpu, PriorityClass::kIdle, last);
  }
  pool.reset();
  EXPECT_EQ(aged.at_start, RtBand(scheduling));
  EXPECT_EQ(rt.at_start, RtBand(scheduling));
  EXPECT_EQ(last.at_start, IdleBand(scheduling));
}

class Recorder {
 public:
  void Add(absl::string_view name) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    names_.emplace_back(name);
  }
  std::vector<std::string> Get() const ABSL_LOCKS_EXCLUDED(mu_) {
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

// Submits one task of `priority_class` and returns how long it was queued.
absl::Duration QueueWaitOf(VerifyPool& pool, PriorityClass priority_class) {
  absl::Duration wait;
  absl::Notification done;
  pool.Submit(pool.scheduling().cpus[0], priority_class,
              [&](absl::Duration queue_wait) {
                wait = queue_wait;
                done.Notify();
              });
  done.WaitForNotification();
  return wait;
}

TEST(VerifyPoolTest, IdleWorkWaitsForTheOtherClassesToBeQuiet) {
  VerifyPoolOptions options;
  options.idle_grace = absl::Milliseconds(200);
  options.aging.idle_delay = absl::Seconds(100);
  std::unique_ptr<VerifyPool> pool = MakePool(options);
  ASSERT_NE(pool, nullptr);
  EXPECT_LT(QueueWaitOf(*pool, PriorityClass::kIdle), absl::Milliseconds(150));
  pool->NoteActivity(PriorityClass::kIdle);  // IDLE is not activity
  EXPECT_LT(QueueWaitOf(*pool, PriorityClass::kIdle), absl::Milliseconds(150));
  // Inline RT work elsewhere, then a BE task: each restarts the grace.
  pool->NoteActivity(PriorityClass::kRt);
  EXPECT_GE(QueueWaitOf(*pool, PriorityClass::kIdle), absl::Milliseconds(150));
  EXPECT_LT(QueueWaitOf(*pool, PriorityClass::kBe), absl::Milliseconds(150));
  EXPECT_GE(QueueWaitOf(*pool, PriorityClass::kIdle), absl::Milliseconds(150));
}

TEST(VerifyPoolTest, HeldIdleWorkRunsOnceAged) {
  VerifyPoolOptions options;
  options.idle_grace = absl::Seconds(100);
  options.aging.idle_delay = absl::Milliseconds(200);
  std::unique_ptr<VerifyPool> pool = MakePool(options);
  ASSERT_NE(pool, nullptr);
  pool->NoteActivity(PriorityClass::kRt);
  const absl::Duration wait = QueueWaitOf(*pool, PriorityClass::kIdle);
  EXPECT_GE(wait, absl::Milliseconds(200));
  EXPECT_LT(wait, absl::Seconds(50));
}

TEST(VerifyPoolTest, UnboundNeverHoldsIdleWork) {
  VerifyPoolOptions options = WithMode(Mode::kUnbound);
  options.idle_grace = absl::Seconds(100);
  options.aging.idle_delay = absl::Seconds(100);
  std::unique_ptr<VerifyPool> pool = MakePool(options);
  ASSERT_NE(pool, nullptr);
  pool->NoteActivity(PriorityClass::kRt);
  EXPECT_LT(QueueWaitOf(*pool, PriorityClass::kIdle), absl::Seconds(50));
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

// Submits racing the worker's band changes: no task may run below its band.
TEST(VerifyPoolTest, ConcurrentSubmitsNeverRunBelowTheirBand) {
  constexpr int kThreads = 3;
  constexpr int kTasksPerThread = 3000;
  std::unique_ptr<VerifyPool> pool = MakePool({});
  ASSERT_NE(pool, nullptr);
  const PoolScheduling& scheduling = pool->scheduling();
  const int cpu = scheduling.cpus[0];
  std::atomic<int> rt_below{0}, be_below{0};
  auto check = [&](PriorityClass c) {
    return [&, c](absl::Duration) {
      const std::string seen = SchedulingOf();
      if (c == PriorityClass::kRt && seen != RtBand(scheduling)) ++rt_below;
      if (c == PriorityClass::kBe && seen != RtBand(scheduling) &&
          seen != BeBand(scheduling)) {
        ++be_below;
      }
    };
  };
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&pool, &check, cpu, t] {
      for (int i = 0; i < kTasksPerThread; ++i) {
        const PriorityClass c = kAllPriorityClasses[(i + t) % 4];
        pool->Submit(cpu, c, check(c));
      }
    });
  }
  for (std::thread& submitter : submitters) submitter.join();
  pool.reset();
  EXPECT_EQ(rt_below.load(), 0);
  EXPECT_EQ(be_below.load(), 0);
}

TEST(VerifyPoolTest, SchedulingToString) {
  PoolScheduling scheduling;
  scheduling.policy = "SCHED_FIFO";
  scheduling.priority = 1;
  scheduling.pinned = true;
  scheduling.threads = 2;
  scheduling.cpus = {0, 1};
  scheduling.class_bands = true;
  scheduling.be_policy = "SCHED_OTHER";
  scheduling.be_priority = 0;
  scheduling.idle_policy = "SCHED_IDLE";
  EXPECT_EQ(scheduling.ToString(),
            "2 threads pinned to CPUs 0,1; RT at SCHED_FIFO priority 1, "
            "BE/NONE at SCHED_OTHER nice 0, IDLE at SCHED_IDLE");
  scheduling.policy = "SCHED_OTHER";
  scheduling.priority = -20;
  scheduling.pinned = false;
  scheduling.threads = 1;
  scheduling.cpus = {3};
  scheduling.class_bands = false;
  EXPECT_EQ(scheduling.ToString(),
            "1 thread unpinned on CPU 3; every class at SCHED_OTHER nice -20");
}

}  // namespace
}  // namespace verity::server
