// The verification pool: worker threads that verify blocks off the gRPC
// callback threads, one per CPU, pinned, each serving its CPU's work by
// priority class at a CPU priority that follows the class (a bound workqueue,
// in kernel terms).

#ifndef VERITYD_SERVER_DISPATCH_VERIFY_POOL_H_
#define VERITYD_SERVER_DISPATCH_VERIFY_POOL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/priority_class.h"
#include "server/dispatch/class_queue.h"
#include "server/dispatch/thread_scheduling.h"
#include "server/dispatch/work_queue.h"

namespace verity::server {

struct VerifyPoolOptions {
  enum class Mode {
    // One worker and one class-ordered queue per CPU, each worker pinned to
    // its CPU; work runs on the CPU that submitted it, cache-hot.
    kPinned,
    // The kernel's old WQ_UNBOUND behaviour, for experiments: `threads`
    // unpinned workers sharing one plain FIFO queue (no class order).
    kUnbound,
  };
  Mode mode = Mode::kPinned;
  // 0: one per CPU in the creating thread's affinity mask (sched_getaffinity),
  // which is what a container's cpuset allows. Pinned mode takes at most that
  // many, on the first CPUs of the mask.
  int threads = 0;
  // Raise the workers' priority: SCHED_FIFO at `fifo_priority` if permitted,
  // else the lowest nice value obtainable (-20 upward to 0). This is the RT
  // band (see class_bands), and in unbound mode or without class_bands every
  // task's. Never fails Create(); scheduling() reports what was obtained.
  bool raise_priority = true;
  int fifo_priority = 1;  // 1..99; 1 is above every SCHED_OTHER thread
  // Pinned mode only (unbound mode is the old behaviour, kept for
  // comparison). A worker's CPU scheduling follows the class of the work it
  // runs, as the kernel couples I/O priority to CPU priority, so IDLE and BE
  // work no longer outrank the gRPC threads that verify RT reads inline:
  //   RT:      the raised scheduling above;
  //   NONE/BE: the scheduling the worker inherited (normally SCHED_OTHER at
  //            the process's nice), the footing of those gRPC threads;
  //   IDLE:    SCHED_IDLE (else nice 19): only CPU nobody else wants.
  // Priority inheritance: a task runs at the band of the most urgent class
  // among it and the work queued behind it, and Submit() boosts a worker at
  // once when it queues work more urgent than the worker's band. Coming back
  // from SCHED_IDLE or nice 19 needs CAP_SYS_NICE (or RLIMIT_NICE); if
  // Create() finds a thread cannot, IDLE work runs at the NONE/BE band.
  // false: every task at the raised scheduling.
  bool class_bands = true;
  // Pinned mode's aging; unbound mode uses ClassQueueOptions::Fifo().
  ClassQueueOptions aging;
  // Pinned mode: IDLE work starts only once no other class has been active
  // (NoteActivity()) for this long, or once it has waited aging.idle_delay:
  // the idle class of the kernel's CFQ/BFQ I/O schedulers, which serve it only
  // when the disk is otherwise idle. Its transport and the client reading it
  // then yield too, since a stream has one message in flight. Zero: off.
  absl::Duration idle_grace = absl::Milliseconds(5);
};

// What the workers actually got, for logs and metrics. Should workers differ,
// each band shows the weakest policy and priority, and pinned only if all are.
struct PoolScheduling {
  // The RT band: what raise_priority obtained (the inherited scheduling if
  // nothing was raised). Without class_bands, every class's.
  std::string policy;  // "SCHED_FIFO" or "SCHED_OTHER" (or another SCHED_*)
  int priority = 0;    // the real-time priority, the nice value, 0 for IDLE
  bool pinned = false;
  int threads = 0;
  // Pinned: worker i's CPU. Unbound: the CPUs the workers may run on.
  std::vector<int> cpus;
  // Whether scheduling follows the class (VerifyPoolOptions::class_bands, in
  // pinned mode). If not, the fields below repeat policy and priority.
  bool class_bands = false;
  std::string be_policy;  // NONE and BE work
  int be_priority = 0;
  std::string idle_policy;  // IDLE work
  int idle_priority = 0;

  // E.g. "2 threads pinned to CPUs 0,1; RT at SCHED_FIFO priority 1, BE/NONE
  // at SCHED_OTHER nice 0, IDLE at SCHED_IDLE", or without class bands
  // "2 threads unpinned on CPUs 0,1; every class at SCHED_FIFO priority 1".
  std::string ToString() const;
};

// Owns its worker threads and the tasks submitted until they run.
// Thread-safe: Submit(), queued() and scheduling() may be called from any
// thread, including from tasks. Each pinned worker has its own lock and queue,
// so submits on different CPUs never contend. A worker changes its CPU
// scheduling (one system call) only when its band changes.
class VerifyPool {
 public:
  // Runs once on a worker with the time it waited between Submit() and its
  // start.
  using Task = PoolTask;

  // INVALID_ARGUMENT for bad options; an error if the affinity mask cannot be
  // read or a thread cannot be started.
  static absl::StatusOr<std::unique_ptr<VerifyPool>> Create(
      const VerifyPoolOptions& options);

  VerifyPool(const VerifyPool&) = delete;
  VerifyPool& operator=(const VerifyPool&) = delete;

  // Runs every task already submitted, then joins the threads. Must not run
  // on a worker, and no Submit() may start once it has begun (that aborts).
  ~VerifyPool();

  // Pinned: queues `task` for the worker of `cpu`, the CPU the caller is on
  // (pass CurrentCpu()); a CPU without a worker maps to worker cpu % threads.
  // With class bands, first raises that worker's band if `priority_class` is
  // more urgent. Unbound: `cpu` is ignored.
  void Submit(int cpu, PriorityClass priority_class, Task task);

  // Records that work of `priority_class` started now, anywhere (Submit()
  // calls it; callers verifying inline should too): IDLE work waits for the
  // other classes to be quiet (see idle_grace). One relaxed store; none for
  // IDLE.
  void NoteActivity(PriorityClass priority_class);

  const PoolScheduling& scheduling() const { return scheduling_; }

  // Tasks queued but not started, across workers.
  size_t queued() const;

 private:
  struct Worker;
  struct WorkerSetup;

  explicit VerifyPool(const VerifyPoolOptions& options);

  bool ClassBands() const;
  // Starts `threads` workers; pinned workers go on the first CPUs of `cpus`.
  absl::Status StartWorkers(const std::vector<int>& cpus, int threads);
  void CreateQueues(const std::vector<int>& cpus, int threads);
  // Waits for every started worker to set itself up; what they got.
  PoolScheduling AwaitWorkerSetups(const std::vector<int>& cpus)
      ABSL_LOCKS_EXCLUDED(setup_mu_);
  bool AllSetUp() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(setup_mu_);
  static void* ThreadMain(void* worker);
  void Run(const Worker& worker) ABSL_LOCKS_EXCLUDED(setup_mu_);
  WorkerSetup SetUpThread(const Worker& worker) const;
  size_t QueueIndex(int cpu) const;

  const VerifyPoolOptions options_;
  // Null unless pinned mode with a non-zero idle_grace.
  std::unique_ptr<IdleGate> idle_gate_;
  // Fixed once Create() returns: one queue per worker (pinned) or one shared
  // queue (unbound), the pinned queue of each CPU number, and the workers.
  std::vector<std::unique_ptr<WorkQueue>> queues_;
  std::vector<size_t> queue_of_cpu_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // Written by Create() before the pool is shared; read-only after.
  PoolScheduling scheduling_;

  absl::Mutex setup_mu_;
  std::vector<WorkerSetup> setups_ ABSL_GUARDED_BY(setup_mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_VERIFY_POOL_H_
