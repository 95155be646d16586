// Implements Dispatcher.

#include "server/dispatch/dispatcher.h"

#include <algorithm>
#include <utility>

#include "lib/status_macros.h"
#include "server/dispatch/thread_scheduling.h"

namespace verity::server {
namespace {

// Each completion thread's own budget: the resource it protects is that
// thread's time.
InlineBudget& ThreadBudget() {
  thread_local InlineBudget budget;
  return budget;
}

// Reads what the job's chunk still lacks (its data, unless an inline start
// read it, and the tree blocks the rest needs), then calls `done`: at once for
// a local chunk, else from the store's thread.
void Fetch(ReadJob* job, Blob::ReadDone done) {
  const BlockRange blocks = job->chunk_blocks();
  job->blob().Fetch(blocks.first, blocks.end, &job->chunk(), std::move(done));
}

bool ChunkIsLocal(const ReadJob& job) {
  return job.blob().IsLocal(job.chunk_blocks().first, job.chunk_blocks().end);
}

}  // namespace

Dispatcher::Dispatcher(const DispatchOptions& options, VerifyPool* pool,
                       DispatchMetrics* metrics)
    : options_(options), pool_(pool), metrics_(metrics) {}

void Dispatcher::Begin(const ReadJob& job) {
  job.blob().PrefetchTree(job.blocks().first, job.blocks().end);
}

void Dispatcher::Read(ReadJob* job, Done done) {
  ReadAhead(*job);
  ReadChunk(job,
            [this, job, done = std::move(done)](absl::Status status) mutable {
              const BlockRange chunk = job->chunk_blocks();
              if (absl::IsDataLoss(status) &&
                  job->blob().Forget(chunk.first, chunk.end)) {
                job->RestartChunk();
                job->placement().on_pool = true;
                Submit(job, std::move(done));
                return;
              }
              std::move(done)(std::move(status));
            });
}

void Dispatcher::ReadAhead(const ReadJob& job) const {
  if (options_.read_ahead_bytes == 0) return;
  const uint64_t first = job.chunk_blocks().end;
  const uint64_t blocks =
      DivRoundUp(options_.read_ahead_bytes, job.blob().geometry().block_size());
  const uint64_t end = std::min(job.blocks().end, first + blocks);
  if (first < end) job.blob().Prefetch(first, end);
}

void Dispatcher::ReadChunk(ReadJob* job, Done done) {
  if (!job->placement().on_pool) {
    const absl::Time start = absl::Now();
    InlineBudget& budget = ThreadBudget();
    const PriorityClass priority_class = job->priority_class();
    DispatchDecision decision =
        Decide(options_.mode, Limits(), priority_class, job->bytes(),
               budget.HasBudget(start, options_.budget));
    if (options_.tuner != nullptr &&
        (decision.reason == DispatchReason::kWithinLimit ||
         decision.reason == DispatchReason::kBudget)) {
      options_.tuner->ObserveInlineChoice(
          priority_class, decision.reason == DispatchReason::kBudget);
    }
    // A chunk that needs the network is read asynchronously, then verified
    // on the pool (forced-inline mode: where it arrived): a completion thread
    // never waits for it.
    if (decision.path == DispatchPath::kInline && !ChunkIsLocal(*job)) {
      if (options_.mode == DispatchMode::kInline) {
        Place(job, decision);
        Submit(job, std::move(done));
        return;
      }
      decision = {DispatchPath::kPool, DispatchReason::kCacheMiss};
    }
    if (decision.path == DispatchPath::kInline) {
      Place(job, decision);
      if (pool_ != nullptr) pool_->NoteActivity(priority_class);
      absl::Status status = VerifyInline(job);
      const absl::Time end = absl::Now();
      budget.Charge(start, end - start, options_.budget);
      metrics_->ObserveVerify(DispatchPath::kInline, end - start);
      if (job->chunk().verified())
        Tune(job->chunk().data.size(), end - start, end);
      if (!status.ok() || job->chunk().verified()) {
        std::move(done)(status);
        return;
      }
      decision = {DispatchPath::kPool, DispatchReason::kCacheMiss};
    }
    job->placement().on_pool = true;
    Place(job, decision);
  }
  Submit(job, std::move(done));
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

absl::Status Dispatcher::VerifyInline(ReadJob* job) const {
  const BlockRange blocks = job->chunk_blocks();
  RETURN_IF_ERROR(job->blob().Load(blocks.first, blocks.end, &job->chunk()));
  RETURN_IF_ERROR(job->blob().VerifyCached(&job->chunk()));
  if (options_.mode == DispatchMode::kInline) {
    return job->blob().VerifyRest(&job->chunk());
  }
  return absl::OkStatus();
}

void Dispatcher::Place(ReadJob* job, DispatchDecision decision) {
  // The first placement, and a fallback to the pool, count; later chunks of
  // a request on the same path do not.
  ReadJob::Placement& placement = job->placement();
  if (placement.placed && decision.path == DispatchPath::kInline) return;
  placement.placed = true;
  metrics_->CountPlacement(decision.path, job->priority_class(),
                           decision.reason);
}

void Dispatcher::Submit(ReadJob* job, Done done) {
  if (ChunkIsLocal(*job)) {
    // Read on the pool's thread, as a local read may still wait on a disk.
    Verify(job, /*fetch=*/true, std::move(done));
    return;
  }
  Fetch(job, [this, job, done = std::move(done)](absl::Status status) mutable {
    if (!status.ok()) {
      std::move(done)(status);
      return;
    }
    Verify(job, /*fetch=*/false, std::move(done));
  });
}

void Dispatcher::Verify(ReadJob* job, bool fetch, Done done) {
  const PriorityClass priority_class = job->priority_class();
  // Forced-inline mode has no pool: what had to be fetched is verified on
  // the thread that fetched it.
  if (pool_ == nullptr) {
    std::move(done)(job->blob().VerifyRest(&job->chunk()));
    return;
  }
  pool_->Submit(
      CurrentCpu(), priority_class,
      [this, job, priority_class, fetch,
       done = std::move(done)](absl::Duration queue_wait) mutable {
        metrics_->ObserveQueueWait(priority_class, queue_wait);
        if (options_.tuner != nullptr) {
          options_.tuner->ObserveQueueWait(priority_class, queue_wait);
        }
        if (job->cancelled()) {
          std::move(done)(absl::CancelledError("the client went away"));
          return;
        }
        const absl::Time start = absl::Now();
        absl::Status status = absl::OkStatus();
        if (fetch) Fetch(job, [&status](absl::Status s) { status = s; });
        if (status.ok()) status = job->blob().VerifyRest(&job->chunk());
        const absl::Time end = absl::Now();
        metrics_->ObserveVerify(DispatchPath::kPool, end - start);
        if (status.ok()) Tune(job->chunk().data.size(), end - start, end);
        std::move(done)(status);
      });
}

}  // namespace verity::server
