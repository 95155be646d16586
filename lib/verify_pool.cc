// Implements the verification pool on pthreads: per-worker pinning, priority
// and names applied by each worker to itself, per-queue absl::Mutex/CondVar,
// and the class bands each queue moves its worker between.

#include "lib/verify_pool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/base/internal/raw_logging.h"
#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "lib/status_macros.h"

namespace verity {
namespace {

struct ThreadScheduling {
  int policy = SCHED_OTHER;
  int priority = 0;  // the real-time priority, the nice value, 0 for IDLE
};

bool IsRealtime(int policy) {
  return policy == SCHED_FIFO || policy == SCHED_RR;
}

bool SameScheduling(const ThreadScheduling& a, const ThreadScheduling& b) {
  return a.policy == b.policy && a.priority == b.priority;
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

// How readily a policy gets the CPU, whatever the priority: real-time, then
// the fair policies, then SCHED_IDLE.
int PolicyRank(int policy) {
  if (IsRealtime(policy)) return 2;
  return policy == SCHED_IDLE ? 0 : 1;
}

// True if a thread scheduled as `a` gets the CPU less readily than `b`.
bool Weaker(const ThreadScheduling& a, const ThreadScheduling& b) {
  if (PolicyRank(a.policy) != PolicyRank(b.policy)) {
    return PolicyRank(a.policy) < PolicyRank(b.policy);
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
  if (result.policy == SCHED_IDLE) return result;  // nice does not matter
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, gettid());
  result.priority = errno == 0 ? nice : 0;
  return result;
}

// Moves thread `tid` of this process to `scheduling`; false if refused,
// possibly half done (policy set, nice not).
bool SetThreadScheduling(pid_t tid, const ThreadScheduling& scheduling) {
  sched_param param = {};
  if (IsRealtime(scheduling.policy)) param.sched_priority = scheduling.priority;
  if (sched_setscheduler(tid, scheduling.policy, &param) != 0) return false;
  if (IsRealtime(scheduling.policy) || scheduling.policy == SCHED_IDLE) {
    return true;
  }
  return setpriority(PRIO_PROCESS, tid, scheduling.priority) == 0;
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

// The IDLE band's fallback where SCHED_IDLE is refused: the weakest nice.
constexpr int kIdleNice = 19;

void* ProbeIdleBandThread(void* result) {
  const pid_t tid = gettid();
  const ThreadScheduling inherited = CurrentThreadScheduling();
  for (const ThreadScheduling& idle :
       {ThreadScheduling{SCHED_IDLE, 0},
        ThreadScheduling{SCHED_OTHER, kIdleNice}}) {
    if (SetThreadScheduling(tid, idle) && SetThreadScheduling(tid, inherited)) {
      *static_cast<std::optional<ThreadScheduling>*>(result) = idle;
      break;
    }
  }
  return nullptr;
}

// The IDLE band: SCHED_IDLE, else nice 19, if a thread can come back from it.
// Coming back needs CAP_SYS_NICE or an RLIMIT_NICE of at least 20 - nice, so
// unprivileged it is usually a one-way trip, and a worker stuck there would
// run RT work at it. So a throwaway thread, scheduled as the workers will
// start, tries the round trip.
std::optional<ThreadScheduling> ProbeIdleBand() {
  std::optional<ThreadScheduling> result;
  pthread_t thread;
  if (pthread_create(&thread, nullptr, &ProbeIdleBandThread, &result) != 0) {
    return std::nullopt;
  }
  pthread_join(thread, nullptr);
  return result;
}

// A pinned worker's CPU scheduling bands, most urgent first; see
// VerifyPoolOptions::class_bands.
enum class Band { kRt = 0, kNormal = 1, kIdle = 2 };

// Indexed by Band. Without class bands all three are the raised scheduling.
using BandScheduling = std::array<ThreadScheduling, 3>;

Band BandOf(PriorityClass priority_class) {
  switch (priority_class) {
    case PriorityClass::kRt:
      return Band::kRt;
    case PriorityClass::kNone:
    case PriorityClass::kBe:
      return Band::kNormal;
    case PriorityClass::kIdle:
      return Band::kIdle;
  }
  return Band::kNormal;
}

const ThreadScheduling& SchedulingOf(const BandScheduling& bands, Band band) {
  return bands[static_cast<int>(band)];
}

// Keeps in `weakest` the weaker of it and `bands`, band by band.
void KeepWeakest(const BandScheduling& bands, BandScheduling& weakest) {
  for (size_t band = 0; band < bands.size(); ++band) {
    if (Weaker(bands[band], weakest[band])) weakest[band] = bands[band];
  }
}

void ReportBands(const BandScheduling& bands, PoolScheduling& out) {
  out.policy = PolicyName(SchedulingOf(bands, Band::kRt).policy);
  out.priority = SchedulingOf(bands, Band::kRt).priority;
  out.be_policy = PolicyName(SchedulingOf(bands, Band::kNormal).policy);
  out.be_priority = SchedulingOf(bands, Band::kNormal).priority;
  out.idle_policy = PolicyName(SchedulingOf(bands, Band::kIdle).policy);
  out.idle_priority = SchedulingOf(bands, Band::kIdle).priority;
}

// "SCHED_FIFO priority 1", "SCHED_OTHER nice 0", "SCHED_IDLE".
std::string DescribePolicy(absl::string_view policy, int priority) {
  if (policy == "SCHED_IDLE") return std::string(policy);
  const bool realtime = policy == "SCHED_FIFO" || policy == "SCHED_RR";
  return absl::StrCat(policy, realtime ? " priority " : " nice ", priority);
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

// When a class other than IDLE was last active, and how long IDLE work waits
// for quiet. Shared by the pinned queues; the time is atomic, as NoteActivity()
// writes it from any thread without a lock.
struct VerifyPool::IdleGate {
  std::atomic<int64_t> last_activity_ns{0};
  absl::Duration grace;
  absl::Duration idle_delay;

  // How much longer IDLE work pushed at `enqueued` must wait at `now`, or
  // zero if it may start.
  absl::Duration Hold(absl::Time now, absl::Time enqueued) const {
    const absl::Time active = absl::FromUnixNanos(
        last_activity_ns.load(std::memory_order_relaxed));
    const absl::Duration quiet_in = active + grace - now;
    const absl::Duration aged_in = enqueued + idle_delay - now;
    return std::max(absl::ZeroDuration(), std::min(quiet_in, aged_in));
  }
};

// One queue and the workers that serve it: a monitor around a ClassQueue.
// With class bands (pinned mode, one worker) it also moves its worker between
// bands. band_, under mu_, is the band the worker is at or, while it lowers
// itself, committed to.
class alignas(ABSL_CACHELINE_SIZE) VerifyPool::WorkQueue {
 public:
  // `idle_gate` may be null (IDLE work is not held back) and must outlive this.
  WorkQueue(const ClassQueueOptions& options, const IdleGate* idle_gate)
      : tasks_(options), idle_gate_(idle_gate) {}

  // From now on thread `tid`, the only worker, now scheduled as bands[kRt],
  // runs each task at its band or a more urgent one still waiting, and
  // Push() raises it to the band of more urgent work at once.
  void EnableBands(pid_t tid, const BandScheduling& bands) {
    absl::MutexLock lock(&mu_);
    worker_tid_ = tid;
    bands_ = bands;
    band_ = Band::kRt;
  }

  void Push(PriorityClass priority_class, Task task) {
    absl::MutexLock lock(&mu_);
    ABSL_RAW_CHECK(!stopping_, "VerifyPool::Submit() after destruction began");
    tasks_.Push(priority_class, absl::Now(), std::move(task));
    // Priority inheritance: urgent work must not wait behind a task that runs
    // at a lower band.
    if (BandOf(priority_class) < band_) Raise(BandOf(priority_class));
    // Always: a worker woken earlier may not have popped yet.
    work_or_stop_.Signal();
  }

  // Blocks for the next task and moves the worker to the band to run it at;
  // nullopt once stopping and drained. Worker only.
  std::optional<ClassQueue<Task>::Popped> Next() {
    std::optional<ClassQueue<Task>::Popped> next;
    std::optional<Lowering> lowering;
    {
      absl::MutexLock lock(&mu_);
      WaitForRunnable();
      next = tasks_.Pop();
      if (next.has_value()) lowering = MoveTo(RunBand(next->priority_class));
    }
    if (lowering.has_value()) Lower(*lowering);
    return next;
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
  // Waits until a task may start or the queue is stopping: a Push() wakes it,
  // and held IDLE work is looked at again when its hold ends.
  void WaitForRunnable() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!stopping_) {
      if (tasks_.empty()) {
        work_or_stop_.Wait(&mu_);
        continue;
      }
      const absl::Duration hold = IdleHold();
      if (hold <= absl::ZeroDuration()) return;
      work_or_stop_.WaitWithTimeout(&mu_, hold);
    }
  }

  // How long the next task must wait: only IDLE work, only while another
  // class was active within the grace period and it has not aged enough.
  absl::Duration IdleHold() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (idle_gate_ == nullptr ||
        tasks_.MostUrgentClass() != PriorityClass::kIdle) {
      return absl::ZeroDuration();
    }
    return idle_gate_->Hold(absl::Now(), *tasks_.NextEnqueued());
  }

  // A band the worker has committed to but not yet set, and boosts_ then.
  struct Lowering {
    pid_t tid;
    ThreadScheduling scheduling;
    uint64_t boosts;
  };

  // The band to run a task of `popped` at: the most urgent of its class and
  // those still waiting (an aged IDLE task runs at RT while RT work waits).
  Band RunBand(PriorityClass popped) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::optional<PriorityClass> waiting = tasks_.MostUrgentClass();
    if (!waiting.has_value()) return BandOf(popped);
    return std::min(BandOf(popped), BandOf(*waiting));
  }

  // Raises at once. A lowering is committed here but left to the worker to
  // make after unlocking: a thread lowered while holding mu_ would at once
  // yield to every thread on its CPU, and block Submit() there.
  std::optional<Lowering> MoveTo(Band band) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (worker_tid_ == 0 || band == band_) return std::nullopt;
    if (band < band_) {
      Raise(band);
      return std::nullopt;
    }
    const bool same = SameScheduling(Of(band), Of(band_));
    band_ = band;
    if (same) return std::nullopt;
    return Lowering{worker_tid_, Of(band), boosts_.load()};
  }

  // A system call only if the scheduling differs. If refused, band_ stays and
  // the next Raise() tries again.
  void Raise(Band band) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (worker_tid_ == 0) return;
    if (!SameScheduling(Of(band), Of(band_))) {
      ++boosts_;  // before the call, for Lower() to see it after its own
      if (!SetThreadScheduling(worker_tid_, Of(band))) return;
    }
    band_ = band;
  }

  // Without mu_. A Raise() since MoveTo() may have come before this call and
  // been undone by it, so then the band is set again.
  void Lower(const Lowering& lowering) ABSL_LOCKS_EXCLUDED(mu_) {
    SetThreadScheduling(lowering.tid, lowering.scheduling);
    if (boosts_.load() == lowering.boosts) return;
    absl::MutexLock lock(&mu_);
    SetThreadScheduling(worker_tid_, Of(band_));
  }

  const ThreadScheduling& Of(Band band) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return SchedulingOf(bands_, band);
  }

  mutable absl::Mutex mu_;
  absl::CondVar work_or_stop_;
  ClassQueue<Task> tasks_ ABSL_GUARDED_BY(mu_);
  const IdleGate* const idle_gate_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Set by EnableBands(); 0 without class bands, which leaves the rest unused.
  pid_t worker_tid_ ABSL_GUARDED_BY(mu_) = 0;
  BandScheduling bands_ ABSL_GUARDED_BY(mu_);
  Band band_ ABSL_GUARDED_BY(mu_) = Band::kRt;
  // Raise() system calls so far; atomic, as Lower() reads it without mu_.
  std::atomic<uint64_t> boosts_{0};
};

// Constant once the thread starts, but for `thread`, which only the pool reads.
struct VerifyPool::Worker {
  VerifyPool* pool;
  int index;
  int cpu;  // pinned mode's CPU; -1 when unbound
  WorkQueue* queue;
  // The IDLE band, if class bands are on and a thread can come back from it.
  std::optional<ThreadScheduling> idle_band;
  pthread_t thread;
};

struct VerifyPool::WorkerSetup {
  bool pinned;
  bool class_bands;
  BandScheduling bands;
};

std::string PoolScheduling::ToString() const {
  const std::string where = absl::StrCat(
      threads, threads == 1 ? " thread " : " threads ",
      pinned ? "pinned to " : "unpinned on ",
      cpus.size() == 1 ? "CPU " : "CPUs ", absl::StrJoin(cpus, ","), "; ");
  if (!class_bands) {
    return absl::StrCat(where, "every class at ",
                        DescribePolicy(policy, priority));
  }
  return absl::StrCat(where, "RT at ", DescribePolicy(policy, priority),
                      ", BE/NONE at ", DescribePolicy(be_policy, be_priority),
                      ", IDLE at ", DescribePolicy(idle_policy, idle_priority));
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

bool VerifyPool::ClassBands() const {
  return options_.class_bands &&
         options_.mode == VerifyPoolOptions::Mode::kPinned;
}

absl::Status VerifyPool::StartWorkers(const std::vector<int>& cpus,
                                      int threads) {
  CreateQueues(cpus, threads);
  const bool pinned = options_.mode == VerifyPoolOptions::Mode::kPinned;
  const std::optional<ThreadScheduling> idle_band =
      ClassBands() ? ProbeIdleBand() : std::nullopt;
  for (int i = 0; i < threads; ++i) {
    const int cpu = pinned ? cpus[i] : -1;
    WorkQueue* queue = queues_[pinned ? i : 0].get();
    workers_.push_back(std::make_unique<Worker>(
        Worker{this, i, cpu, queue, idle_band, pthread_t{}}));
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

void VerifyPool::CreateQueues(const std::vector<int>& cpus, int threads) {
  const bool pinned = options_.mode == VerifyPoolOptions::Mode::kPinned;
  const ClassQueueOptions order =
      pinned ? options_.aging : ClassQueueOptions::Fifo();
  if (pinned && options_.idle_grace > absl::ZeroDuration()) {
    idle_gate_ = std::make_unique<IdleGate>();
    idle_gate_->grace = options_.idle_grace;
    idle_gate_->idle_delay = options_.aging.idle_delay;
  }
  for (int i = 0; i < (pinned ? threads : 1); ++i) {
    queues_.push_back(std::make_unique<WorkQueue>(order, idle_gate_.get()));
  }
  if (!pinned) return;
  queue_of_cpu_.resize(cpus[threads - 1] + 1);
  for (size_t cpu = 0; cpu < queue_of_cpu_.size(); ++cpu) {
    queue_of_cpu_[cpu] = cpu % threads;
  }
  for (int i = 0; i < threads; ++i) queue_of_cpu_[cpus[i]] = i;
}

bool VerifyPool::AllSetUp() const { return setups_.size() == workers_.size(); }

PoolScheduling VerifyPool::AwaitWorkerSetups(const std::vector<int>& cpus) {
  absl::MutexLock lock(&setup_mu_);
  setup_mu_.Await(absl::Condition(this, &VerifyPool::AllSetUp));
  PoolScheduling result;
  result.threads = static_cast<int>(workers_.size());
  result.pinned = options_.mode == VerifyPoolOptions::Mode::kPinned;
  result.class_bands = ClassBands();
  BandScheduling weakest = setups_.front().bands;
  for (const WorkerSetup& setup : setups_) {
    result.pinned = result.pinned && setup.pinned;
    KeepWeakest(setup.bands, weakest);
  }
  ReportBands(weakest, result);
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
  // Before Create() returns, so that every Submit() can raise the band.
  if (setup.class_bands) worker.queue->EnableBands(gettid(), setup.bands);
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

// Records the inherited scheduling before raising: it is the NONE/BE band.
VerifyPool::WorkerSetup VerifyPool::SetUpThread(const Worker& worker) const {
  const bool pinned = worker.cpu >= 0;
  const std::string name = absl::StrCat(pinned ? "verify/" : "verify-u/",
                                        pinned ? worker.cpu : worker.index);
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  WorkerSetup setup;
  setup.pinned = pinned && PinToCpu(worker.cpu);
  const ThreadScheduling inherited = CurrentThreadScheduling();
  if (options_.raise_priority) RaisePriority(options_.fifo_priority);
  const ThreadScheduling raised = CurrentThreadScheduling();
  setup.class_bands = ClassBands();
  setup.bands = {raised, raised, raised};
  if (setup.class_bands) {
    setup.bands = {raised, inherited, worker.idle_band.value_or(inherited)};
  }
  return setup;
}

void VerifyPool::Submit(int cpu, PriorityClass priority_class, Task task) {
  NoteActivity(priority_class);
  queues_[QueueIndex(cpu)]->Push(priority_class, std::move(task));
}

void VerifyPool::NoteActivity(PriorityClass priority_class) {
  if (idle_gate_ == nullptr || priority_class == PriorityClass::kIdle) return;
  idle_gate_->last_activity_ns.store(absl::ToUnixNanos(absl::Now()),
                                     std::memory_order_relaxed);
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
