// Implements the verification pool on pthreads: per-worker pinning, priority
// and names applied by each worker to itself, per-queue absl::Mutex/CondVar.

#include "lib/verify_pool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/base/internal/raw_logging.h"
#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/status_macros.h"

namespace verity {
namespace {

struct ThreadScheduling {
  int policy = SCHED_OTHER;
  int priority = 0;  // the real-time priority, or the nice value
};

bool IsRealtime(int policy) {
  return policy == SCHED_FIFO || policy == SCHED_RR;
}

std::string PolicyName(int policy) {
  switch (policy) {
    case SCHED_FIFO:
      return "SCHED_FIFO";
    case SCHED_RR:
      return "SCHED_RR";
    case SCHED_OTHER:
      return "SCHED_OTHER";
    case SCHED_BATCH:
      return "SCHED_BATCH";
    case SCHED_IDLE:
      return "SCHED_IDLE";
  }
  return absl::StrCat("SCHED_", policy);
}

// True if a thread scheduled as `a` gets the CPU less readily than `b`.
bool Weaker(const ThreadScheduling& a, const ThreadScheduling& b) {
  if (IsRealtime(a.policy) != IsRealtime(b.policy)) {
    return !IsRealtime(a.policy);
  }
  return IsRealtime(a.policy) ? a.priority < b.priority
                              : a.priority > b.priority;
}

ThreadScheduling CurrentThreadScheduling() {
  ThreadScheduling result;
  sched_param param = {};
  if (pthread_getschedparam(pthread_self(), &result.policy, &param) != 0) {
    result.policy = SCHED_OTHER;
  }
  if (IsRealtime(result.policy)) {
    result.priority = param.sched_priority;
    return result;
  }
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, gettid());
  result.priority = errno == 0 ? nice : 0;
  return result;
}

// SCHED_FIFO if permitted (CAP_SYS_NICE or RLIMIT_RTPRIO), else the lowest
// nice value RLIMIT_NICE allows; without either the thread stays as it was.
void RaisePriority(int fifo_priority) {
  sched_param param = {};
  param.sched_priority = fifo_priority;
  if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0) return;
  const pid_t tid = gettid();
  for (int nice = -20; nice <= 0; ++nice) {
    if (setpriority(PRIO_PROCESS, tid, nice) == 0) return;
  }
}

bool PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// The CPUs of the calling thread's affinity mask, which new threads inherit.
// Machines with more than CPU_SETSIZE (1024) CPUs fail with EINVAL.
absl::StatusOr<std::vector<int>> AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return absl::ErrnoToStatus(errno, "sched_getaffinity");
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

absl::Status ValidateOptions(const VerifyPoolOptions& options) {
  if (options.threads < 0) {
    return absl::InvalidArgumentError("VerifyPool threads must be >= 0");
  }
  if (options.raise_priority &&
      (options.fifo_priority < sched_get_priority_min(SCHED_FIFO) ||
       options.fifo_priority > sched_get_priority_max(SCHED_FIFO))) {
    return absl::InvalidArgumentError(
        absl::StrCat("VerifyPool fifo_priority ", options.fifo_priority,
                     " is outside SCHED_FIFO's range"));
  }
  if (options.aging.be_delay < absl::ZeroDuration() ||
      options.aging.idle_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("VerifyPool aging delays must be >= 0");
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ThreadCount(const VerifyPoolOptions& options,
                                size_t num_cpus) {
  if (options.threads == 0) return static_cast<int>(num_cpus);
  if (options.mode == VerifyPoolOptions::Mode::kPinned &&
      static_cast<size_t>(options.threads) > num_cpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("VerifyPool pinned mode has at most one thread per CPU: ",
                     options.threads, " threads, ", num_cpus, " CPUs"));
  }
  return options.threads;
}

}  // namespace

// One queue and the workers that serve it: a monitor around a ClassQueue.
class alignas(ABSL_CACHELINE_SIZE) VerifyPool::WorkQueue {
 public:
  explicit WorkQueue(const ClassQueueOptions& options) : tasks_(options) {}

  void Push(PriorityClass priority_class, Task task) {
    absl::MutexLock lock(&mu_);
    ABSL_RAW_CHECK(!stopping_, "VerifyPool::Submit() after destruction began");
    tasks_.Push(priority_class, absl::Now(), std::move(task));
    // Always: a worker woken earlier may not have popped yet.
    work_or_stop_.Signal();
  }

  // Blocks for the next task; nullopt once stopping and drained.
  std::optional<ClassQueue<Task>::Popped> Next() {
    absl::MutexLock lock(&mu_);
    while (tasks_.empty() && !stopping_) work_or_stop_.Wait(&mu_);
    return tasks_.Pop();
  }

  void Stop() {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    work_or_stop_.SignalAll();
  }

  size_t size() const {
    absl::MutexLock lock(&mu_);
    return tasks_.size();
  }

 private:
  mutable absl::Mutex mu_;
  absl::CondVar work_or_stop_;
  ClassQueue<Task> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

// Constant once the thread starts, but for `thread`, which only the pool reads.
struct VerifyPool::Worker {
  VerifyPool* pool;
  int index;
  int cpu;  // pinned mode's CPU; -1 when unbound
  WorkQueue* queue;
  pthread_t thread;
};

struct VerifyPool::WorkerSetup {
  bool pinned;
  ThreadScheduling scheduling;
};

std::string PoolScheduling::ToString() const {
  const bool realtime = policy == "SCHED_FIFO" || policy == "SCHED_RR";
  return absl::StrCat(threads, threads == 1 ? " thread " : " threads ",
                      pinned ? "pinned to " : "unpinned on ",
                      cpus.size() == 1 ? "CPU " : "CPUs ",
                      absl::StrJoin(cpus, ","), ", ", policy,
                      realtime ? " priority " : " nice ", priority);
}

absl::StatusOr<std::unique_ptr<VerifyPool>> VerifyPool::Create(
    const VerifyPoolOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  ASSIGN_OR_RETURN(const std::vector<int> cpus, AffinityCpus());
  ASSIGN_OR_RETURN(const int threads, ThreadCount(options, cpus.size()));
  // On failure the destructor stops and joins the workers already started.
  std::unique_ptr<VerifyPool> pool(new VerifyPool(options));
  RETURN_IF_ERROR(pool->StartWorkers(cpus, threads));
  pool->scheduling_ = pool->AwaitWorkerSetups(cpus);
  return pool;
}

VerifyPool::VerifyPool(const VerifyPoolOptions& options) : options_(options) {}

VerifyPool::~VerifyPool() {
  for (const std::unique_ptr<WorkQueue>& queue : queues_) queue->Stop();
  for (const std::unique_ptr<Worker>& worker : workers_) {
    ABSL_RAW_CHECK(pthread_join(worker->thread, nullptr) == 0,
                   "VerifyPool destroyed on one of its workers");
  }
}

absl::Status VerifyPool::StartWorkers(const std::vector<int>& cpus,
                                      int threads) {
  const bool pinned = options_.mode == VerifyPoolOptions::Mode::kPinned;
  const ClassQueueOptions order =
      pinned ? options_.aging : ClassQueueOptions::Fifo();
  for (int i = 0; i < (pinned ? threads : 1); ++i) {
    queues_.push_back(std::make_unique<WorkQueue>(order));
  }
  if (pinned) {
    queue_of_cpu_.resize(cpus[threads - 1] + 1);
    for (size_t cpu = 0; cpu < queue_of_cpu_.size(); ++cpu) {
      queue_of_cpu_[cpu] = cpu % threads;
    }
    for (int i = 0; i < threads; ++i) queue_of_cpu_[cpus[i]] = i;
  }
  for (int i = 0; i < threads; ++i) {
    workers_.push_back(std::make_unique<Worker>(Worker{
        this, i, pinned ? cpus[i] : -1, queues_[pinned ? i : 0].get(), {}}));
    const int error =
        pthread_create(&workers_.back()->thread, nullptr,
                       &VerifyPool::ThreadMain, workers_.back().get());
    if (error != 0) {
      workers_.pop_back();
      return absl::ErrnoToStatus(error, "VerifyPool pthread_create");
    }
  }
  return absl::OkStatus();
}

bool VerifyPool::AllSetUp() const { return setups_.size() == workers_.size(); }

PoolScheduling VerifyPool::AwaitWorkerSetups(const std::vector<int>& cpus) {
  absl::MutexLock lock(&setup_mu_);
  setup_mu_.Await(absl::Condition(this, &VerifyPool::AllSetUp));
  PoolScheduling result;
  result.threads = static_cast<int>(workers_.size());
  result.pinned = options_.mode == VerifyPoolOptions::Mode::kPinned;
  ThreadScheduling weakest = setups_.front().scheduling;
  for (const WorkerSetup& setup : setups_) {
    result.pinned = result.pinned && setup.pinned;
    if (Weaker(setup.scheduling, weakest)) weakest = setup.scheduling;
  }
  result.policy = PolicyName(weakest.policy);
  result.priority = weakest.priority;
  if (options_.mode == VerifyPoolOptions::Mode::kUnbound) {
    result.cpus = cpus;
  } else {
    for (const std::unique_ptr<Worker>& worker : workers_) {
      result.cpus.push_back(worker->cpu);
    }
  }
  return result;
}

void* VerifyPool::ThreadMain(void* worker) {
  const Worker& self = *static_cast<Worker*>(worker);
  self.pool->Run(self);
  return nullptr;
}

void VerifyPool::Run(const Worker& worker) {
  const WorkerSetup setup = SetUpThread(worker);
  {
    absl::MutexLock lock(&setup_mu_);
    setups_.push_back(setup);
  }
  while (std::optional<ClassQueue<Task>::Popped> next = worker.queue->Next()) {
    // absl::Now() is the wall clock; a step back must not give a negative.
    std::move(next->item)(
        std::max(absl::ZeroDuration(), absl::Now() - next->enqueued));
  }
}

VerifyPool::WorkerSetup VerifyPool::SetUpThread(const Worker& worker) const {
  const bool pinned = worker.cpu >= 0;
  const std::string name = absl::StrCat(pinned ? "verify/" : "verify-u/",
                                        pinned ? worker.cpu : worker.index);
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  WorkerSetup setup;
  setup.pinned = pinned && PinToCpu(worker.cpu);
  if (options_.raise_priority) RaisePriority(options_.fifo_priority);
  setup.scheduling = CurrentThreadScheduling();
  return setup;
}

void VerifyPool::Submit(int cpu, PriorityClass priority_class, Task task) {
  queues_[QueueIndex(cpu)]->Push(priority_class, std::move(task));
}

size_t VerifyPool::QueueIndex(int cpu) const {
  if (cpu >= 0 && static_cast<size_t>(cpu) < queue_of_cpu_.size()) {
    return queue_of_cpu_[cpu];
  }
  return cpu >= 0 ? static_cast<size_t>(cpu) % queues_.size() : 0;
}

size_t VerifyPool::queued() const {
  size_t total = 0;
  for (const std::unique_ptr<WorkQueue>& queue : queues_) {
    total += queue->size();
  }
  return total;
}

int CurrentCpu() {
  const int cpu = sched_getcpu();
  return cpu < 0 ? 0 : cpu;
}

}  // namespace verity
