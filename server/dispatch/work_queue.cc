// Implements WorkQueue: one absl::Mutex and CondVar per queue, and the band
// changes of its worker, raised under the lock and lowered outside it.

#include "server/dispatch/work_queue.h"

#include <algorithm>
#include <utility>

#include "absl/base/internal/raw_logging.h"
#include "absl/time/clock.h"

namespace verity::server {

Band BandOf(PriorityClass priority_class) {
  return static_cast<Band>(ServiceRank(priority_class));
}

void IdleGate::NoteActivity() {
  last_activity_ns.store(absl::ToUnixNanos(absl::Now()),
                         std::memory_order_relaxed);
}

absl::Duration IdleGate::Hold(absl::Time now, absl::Time enqueued) const {
  const absl::Time active =
      absl::FromUnixNanos(last_activity_ns.load(std::memory_order_relaxed));
  const absl::Duration quiet_in = active + grace - now;
  const absl::Duration aged_in = enqueued + idle_delay - now;
  return std::max(absl::ZeroDuration(), std::min(quiet_in, aged_in));
}

void WorkQueue::EnableBands(pid_t tid, const BandScheduling& bands) {
  absl::MutexLock lock(&mu_);
  worker_tid_ = tid;
  bands_ = bands;
  band_ = Band::kRt;
}

void WorkQueue::Push(PriorityClass priority_class, PoolTask task) {
  absl::MutexLock lock(&mu_);
  ABSL_RAW_CHECK(!stopping_, "VerifyPool::Submit() after destruction began");
  tasks_.Push(priority_class, absl::Now(), std::move(task));
  // Priority inheritance: urgent work must not wait behind a task that runs
  // at a lower band.
  if (BandOf(priority_class) < band_) Raise(BandOf(priority_class));
  // Always: a worker woken earlier may not have popped yet.
  work_or_stop_.Signal();
}

std::optional<ClassQueue<PoolTask>::Popped> WorkQueue::Next() {
  std::optional<ClassQueue<PoolTask>::Popped> next;
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

void WorkQueue::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  work_or_stop_.SignalAll();
}

size_t WorkQueue::size() const {
  absl::MutexLock lock(&mu_);
  return tasks_.size();
}

void WorkQueue::WaitForRunnable() {
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

absl::Duration WorkQueue::IdleHold() const {
  if (idle_gate_ == nullptr ||
      tasks_.MostUrgentClass() != PriorityClass::kIdle) {
    return absl::ZeroDuration();
  }
  return idle_gate_->Hold(absl::Now(), *tasks_.NextEnqueued());
}

Band WorkQueue::RunBand(PriorityClass popped) const {
  const std::optional<PriorityClass> waiting = tasks_.MostUrgentClass();
  if (!waiting.has_value()) return BandOf(popped);
  return std::min(BandOf(popped), BandOf(*waiting));
}

std::optional<WorkQueue::Lowering> WorkQueue::MoveTo(Band band) {
  if (worker_tid_ == 0 || band == band_) return std::nullopt;
  if (band < band_) {
    Raise(band);
    return std::nullopt;
  }
  const bool same = Of(band) == Of(band_);
  band_ = band;
  if (same) return std::nullopt;
  return Lowering{worker_tid_, Of(band), boosts_.load()};
}

void WorkQueue::Raise(Band band) {
  if (worker_tid_ == 0) return;
  if (Of(band) != Of(band_)) {
    ++boosts_;  // before the call, for Lower() to see it after its own
    if (!SetThreadScheduling(worker_tid_, Of(band))) return;
  }
  band_ = band;
}

void WorkQueue::Lower(const Lowering& lowering) {
  SetThreadScheduling(lowering.tid, lowering.scheduling);
  if (boosts_.load() == lowering.boosts) return;
  absl::MutexLock lock(&mu_);
  SetThreadScheduling(worker_tid_, Of(band_));
}

}  // namespace verity::server
