// Implements the verification pool's lifecycle on pthreads: the workers, each
// pinning, naming and raising itself before it serves its WorkQueue, and the
// report of the scheduling they obtained.

#include "server/dispatch/verify_pool.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/status_macros.h"

namespace verity::server {
namespace {

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
  while (std::optional<ClassQueue<PoolTask>::Popped> next =
             worker.queue->Next()) {
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
  idle_gate_->NoteActivity();
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

}  // namespace verity::server
