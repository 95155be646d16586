// One queue of the verification pool and the worker thread that serves it: a
// monitor around a ClassQueue that moves its worker between CPU scheduling
// bands as the class of the work changes, and holds IDLE work back while other
// classes are busy.

#ifndef VERITYD_SERVER_DISPATCH_WORK_QUEUE_H_
#define VERITYD_SERVER_DISPATCH_WORK_QUEUE_H_

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/priority_class.h"
#include "server/dispatch/class_queue.h"
#include "server/dispatch/thread_scheduling.h"

namespace verity::server {

// Runs once on a worker with the time it waited between being queued and its
// start (the analog of the kernel's workqueue scheduling latency).
using PoolTask = absl::AnyInvocable<void(absl::Duration queue_wait) &&>;

// A pinned worker's CPU scheduling bands, most urgent first; see
// VerifyPoolOptions::class_bands.
// Numbered as ServiceRank() numbers the classes that run in them.
enum class Band { kRt = 0, kNormal = 1, kIdle = 2 };

// Indexed by Band. Without class bands all three are the raised scheduling.
using BandScheduling = std::array<ThreadScheduling, 3>;

// RT work runs in the RT band, NONE and BE in the normal one, IDLE in the idle
// one.
Band BandOf(PriorityClass priority_class);

inline const ThreadScheduling& SchedulingOf(const BandScheduling& bands,
                                            Band band) {
  return bands[static_cast<int>(band)];
}

// When a class other than IDLE was last active, and how long IDLE work waits
// for quiet. Shared by the pinned queues; the time is atomic, as any thread
// records activity without a lock.
struct IdleGate {
  std::atomic<int64_t> last_activity_ns{0};
  absl::Duration grace;
  absl::Duration idle_delay;

  // Records that work of a class other than IDLE started now.
  void NoteActivity();

  // How much longer IDLE work queued at `enqueued` must wait at `now`, or
  // zero if it may start.
  absl::Duration Hold(absl::Time now, absl::Time enqueued) const;
};

// Thread-safe; Next() is for the queue's worker only. With class bands (pinned
// mode, one worker) it also moves that worker between bands; band_, under mu_,
// is the band the worker is at or, while it lowers itself, committed to.
class alignas(ABSL_CACHELINE_SIZE) WorkQueue {
 public:
  // `idle_gate` may be null (IDLE work is not held back) and must outlive this.
  WorkQueue(const ClassQueueOptions& options, const IdleGate* idle_gate)
      : tasks_(options), idle_gate_(idle_gate) {}

  // From now on thread `tid`, the only worker, now scheduled as bands[kRt],
  // runs each task at its band or a more urgent one still waiting, and
  // Push() raises it to the band of more urgent work at once.
  void EnableBands(pid_t tid, const BandScheduling& bands)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Aborts once Stop() was called.
  void Push(PriorityClass priority_class, PoolTask task)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Blocks for the next task and moves the worker to the band to run it at;
  // nullopt once stopping and drained. Worker only.
  std::optional<ClassQueue<PoolTask>::Popped> Next() ABSL_LOCKS_EXCLUDED(mu_);

  // Wakes the worker to drain what is queued and end.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // A band the worker has committed to but not yet set, and boosts_ then.
  struct Lowering {
    pid_t tid;
    ThreadScheduling scheduling;
    uint64_t boosts;
  };

  // Waits until a task may start or the queue is stopping: a Push() wakes it,
  // and held IDLE work is looked at again when its hold ends.
  void WaitForRunnable() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // How long the next task must wait: only IDLE work, only while another
  // class was active within the grace period and it has not aged enough.
  absl::Duration IdleHold() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The band to run a task of `popped` at: the most urgent of its class and
  // those still waiting (an aged IDLE task runs at RT while RT work waits).
  Band RunBand(PriorityClass popped) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Raises at once. A lowering is committed here but left to the worker to
  // make after unlocking: a thread lowered while holding mu_ would at once
  // yield to every thread on its CPU, and block Push() there.
  std::optional<Lowering> MoveTo(Band band) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A system call only if the scheduling differs. If refused, band_ stays and
  // the next Raise() tries again.
  void Raise(Band band) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Without mu_. A Raise() since MoveTo() may have come before this call and
  // been undone by it, so then the band is set again.
  void Lower(const Lowering& lowering) ABSL_LOCKS_EXCLUDED(mu_);
  const ThreadScheduling& Of(Band band) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return SchedulingOf(bands_, band);
  }

  mutable absl::Mutex mu_;
  absl::CondVar work_or_stop_;
  ClassQueue<PoolTask> tasks_ ABSL_GUARDED_BY(mu_);
  const IdleGate* const idle_gate_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Set by EnableBands(); 0 without class bands, which leaves the rest unused.
  pid_t worker_tid_ ABSL_GUARDED_BY(mu_) = 0;
  BandScheduling bands_ ABSL_GUARDED_BY(mu_);
  Band band_ ABSL_GUARDED_BY(mu_) = Band::kRt;
  // Raise() system calls so far; atomic, as Lower() reads it without mu_.
  std::atomic<uint64_t> boosts_{0};
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_WORK_QUEUE_H_
