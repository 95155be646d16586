// Implements Dispatcher.

#include "server/dispatch/dispatcher.h"

#include <algorithm>
#include <utility>

#include "lib/base/status_macros.h"
#include "server/dispatch/thread_scheduling.h"

namespace verity::server {
namespace {

// Each completion thread's own budget: the resource it protects is that
// thread's time.
InlineBudget& ThreadBudget() {
  thread_local InlineBudget budget;
  return budget;
}

}  // namespace

Dispatcher::Dispatcher(const DispatchOptions& options,
                       std::shared_ptr<VerifyPool> pool,
                       std::shared_ptr<DispatchMetrics> metrics)
    : options_(options), pool_(std::move(pool)), metrics_(std::move(metrics)) {}

Dispatcher::~Dispatcher() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int64_t* reads) { return *reads == 0; }, &reads_));
}

Dispatcher::Done Dispatcher::Counted(Done done) {
  // Ends the count when the `done` that holds it is destroyed: after it ran,
  // or unrun.
  class Count {
   public:
    explicit Count(Dispatcher* dispatcher) : dispatcher_(dispatcher) {}
    Count(const Count&) = delete;
    Count& operator=(const Count&) = delete;
    ~Count() { dispatcher_->EndRead(); }

   private:
    Dispatcher* const dispatcher_;
  };
  {
    absl::MutexLock lock(&mu_);
    ++reads_;
  }
  return [count = std::make_unique<Count>(this),
          done = std::move(done)](absl::Status status) mutable {
    std::move(done)(std::move(status));
  };
}

void Dispatcher::EndRead() {
  absl::MutexLock lock(&mu_);
  --reads_;
}

void Dispatcher::Begin(const ReadJob& job) {
  job.blob().PrefetchTree(job.blocks().first, job.blocks().end);
}

std::optional<absl::Status> Dispatcher::TryReadNow(ReadJob& job) {
  ReadAhead(job);
  if (job.placement().on_pool) return std::nullopt;
  const absl::Time start = absl::Now();
  const PriorityClass priority_class = job.priority_class();
  const DispatchDecision decision =
      Decide(options_.mode, Limits(), priority_class, job.bytes(),
             ThreadBudget().HasBudget(start, options_.budget));
  if (options_.tuner != nullptr &&
      (decision.reason == DispatchReason::kWithinLimit ||
       decision.reason == DispatchReason::kBudget)) {
    options_.tuner->ObserveInlineChoice(
        priority_class, decision.reason == DispatchReason::kBudget);
  }
  if (decision.path != DispatchPath::kInline) {
    ToPool(job, decision);
    return std::nullopt;
  }
  return TryInline(job, decision, start);
}

std::optional<absl::Status> Dispatcher::TryInline(ReadJob& job,
                                                  DispatchDecision decision,
                                                  absl::Time start) {
  const bool forced = options_.mode == DispatchMode::kInline;
  Chunk& chunk = *job.chunk();
  std::optional<absl::Status> status = chunk.TryLoadNow();
  // Data that needs the network is read asynchronously, then verified on
  // the pool, in every mode: neither a completion thread nor the store's
  // thread that brings it waits for the hashing.
  if (!status.has_value()) {
    if (forced) {
      Place(job, decision);
    } else {
      ToPool(job, {DispatchPath::kPool, DispatchReason::kCacheMiss});
    }
    return std::nullopt;
  }
  Place(job, decision);
  pool_->NoteActivity(job.priority_class());
  if (status->ok()) status = chunk.VerifyCached();
  if (status->ok() && forced) status = chunk.TryFinishNow();
  const absl::Time end = absl::Now();
  ThreadBudget().Charge(start, end - start, options_.budget);
  metrics_->ObserveVerify(DispatchPath::kInline, end - start);
  if (chunk.verified()) Tune(chunk.data_bytes(), end - start, end);
  // A bad cached copy, or a bad block FEC may repair: read again on the
  // pool, where a repair may start (a completion thread never waits for
  // one).
  if (status.has_value() && absl::IsDataLoss(*status) &&
      ((!chunk.reread() &&
        job.blob().Forget(chunk.blocks().first, chunk.blocks().end)) ||
       CanRepair(job, *status))) {
    job.RestartChunk();
    job.placement().on_pool = true;
    return std::nullopt;
  }
  if (!status.has_value() || !status->ok() || chunk.verified()) return status;
  if (!forced) ToPool(job, {DispatchPath::kPool, DispatchReason::kCacheMiss});
  return std::nullopt;
}

void Dispatcher::ReadLater(std::shared_ptr<ReadJob> job, Done done) {
  Submit(std::move(job), Counted(std::move(done)));
}

void Dispatcher::ReadAhead(const ReadJob& job) const {
  if (options_.read_ahead_bytes == 0) return;
  const uint64_t first = job.chunk_blocks().end;
  const uint64_t blocks =
      DivRoundUp(options_.read_ahead_bytes, job.blob().geometry().block_size());
  const uint64_t end = std::min(job.blocks().end, first + blocks);
  if (first < end) job.blob().Prefetch(first, end);
}

InlineLimits Dispatcher::Limits() const {
  return options_.tuner != nullptr ? options_.tuner->limits() : options_.limits;
}

void Dispatcher::Tune(uint64_t bytes, absl::Duration spent, absl::Time now) {
  if (options_.tuner == nullptr) return;
  options_.tuner->ObserveVerify(bytes, spent);
  options_.tuner->Adjust(now);
}

absl::StatusOr<std::string> Dispatcher::TreeBlock(const VerifiedBlob& blob,
                                                  TreeBlockId id) const {
  return blob.VerifiedTreeBlock(id);
}

void Dispatcher::Place(ReadJob& job, DispatchDecision decision) {
  // The first placement, and a fallback to the pool, count; later chunks of
  // a request on the same path do not.
  ReadJob::Placement& placement = job.placement();
  if (placement.placed && decision.path == DispatchPath::kInline) return;
  placement.placed = true;
  metrics_->CountPlacement(decision.path, job.priority_class(),
                           decision.reason);
}

void Dispatcher::ToPool(ReadJob& job, DispatchDecision decision) {
  job.placement().on_pool = true;
  Place(job, decision);
}

void Dispatcher::Submit(std::shared_ptr<ReadJob> job, Done done) {
  const PriorityClass priority_class = job->priority_class();
  pool_->Submit(CurrentCpu(), priority_class,
                [this, job = std::move(job), priority_class,
                 done = std::move(done)](absl::Duration queue_wait) mutable {
                  metrics_->ObserveQueueWait(priority_class, queue_wait);
                  if (options_.tuner != nullptr) {
                    options_.tuner->ObserveQueueWait(priority_class,
                                                     queue_wait);
                  }
                  Work(std::move(job), std::move(done));
                });
}

void Dispatcher::Work(std::shared_ptr<ReadJob> job, Done done) {
  if (job->cancelled()) {
    std::move(done)(absl::CancelledError("the client went away"));
    return;
  }
  // The chunk this work is for: a restart replaces the job's, never this.
  std::shared_ptr<Chunk> chunk = job->chunk();
  const absl::Time start = absl::Now();
  std::optional<absl::Status> status = chunk->TryFinishNow();
  if (!status.has_value()) {
    // What it lacks comes from the network, and is verified back here.
    chunk->FetchLater([this, job = std::move(job),
                       done = std::move(done)](absl::Status fetched) mutable {
      if (!fetched.ok()) {
        Complete(std::move(job), std::move(fetched), std::move(done));
        return;
      }
      Submit(std::move(job), std::move(done));
    });
    return;
  }
  const absl::Time end = absl::Now();
  metrics_->ObserveVerify(DispatchPath::kPool, end - start);
  if (status->ok()) Tune(chunk->data_bytes(), end - start, end);
  Complete(std::move(job), *std::move(status), std::move(done));
}

void Dispatcher::Complete(std::shared_ptr<ReadJob> job, absl::Status status,
                          Done done) {
  const Chunk& chunk = *job->chunk();
  if (absl::IsDataLoss(status) && !chunk.reread() &&
      job->blob().Forget(chunk.blocks().first, chunk.blocks().end)) {
    job->RestartChunk();
    Submit(std::move(job), std::move(done));
    return;
  }
  if (CanRepair(*job, status)) {
    Repair(std::move(job), std::move(status), std::move(done));
    return;
  }
  std::move(done)(std::move(status));
}

bool Dispatcher::CanRepair(const ReadJob& job,
                           const absl::Status& status) const {
  return options_.repairs != nullptr && absl::IsDataLoss(status) &&
         job.blob().blob().fec_roots() != 0 && BadBlockOf(status).has_value() &&
         job.chunk_repairs_left() > 0;
}

void Dispatcher::Repair(std::shared_ptr<ReadJob> job, absl::Status status,
                        Done done) {
  job->CountChunkRepair();
  // Shared, so that a refused repair does not take them along.
  auto pending = std::make_shared<std::pair<absl::Status, Done>>(
      std::move(status), std::move(done));
  const absl::Status queued = options_.repairs->Repair(
      job->shared_blob(), pending->first, job->priority_class(),
      [this, job, pending](const RepairCoordinator::Result& repaired) {
        if (!repaired.ok()) {
          std::move(pending->second)(std::move(pending->first));
          return;
        }
        job->RestartChunk();
        Submit(job, std::move(pending->second));
      });
  if (!queued.ok()) {
    metrics_->CountFecRepairFailure();
    std::move(pending->second)(std::move(pending->first));
  }
}

}  // namespace verity::server
