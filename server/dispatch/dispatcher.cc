// Implements Dispatcher.

#include "server/dispatch/dispatcher.h"

#include <utility>

#include "lib/status_macros.h"

namespace verity::server {
namespace {

// Each completion thread's own budget: the resource it protects is that
// thread's time.
InlineBudget& ThreadBudget() {
  thread_local InlineBudget budget;
  return budget;
}

}  // namespace

Dispatcher::Dispatcher(const DispatchOptions& options, VerifyPool* pool,
                       DispatchMetrics* metrics)
    : options_(options), pool_(pool), metrics_(metrics) {}

void Dispatcher::Verify(VerifiedBlob* blob, RequestDispatch* request,
                        uint64_t first_block, uint64_t end_block,
                        BlockRead* read, const std::atomic<bool>* cancelled,
                        Done done) {
  read->loaded = false;
  if (!request->on_pool) {
    const absl::Time start = absl::Now();
    InlineBudget& budget = ThreadBudget();
    DispatchDecision decision =
        Decide(options_.mode, options_.limits, request->priority_class,
               request->bytes, budget.HasBudget(start, options_.budget));
    if (decision.path == DispatchPath::kInline) {
      Place(request, decision);
      if (pool_ != nullptr) pool_->NoteActivity(request->priority_class);
      absl::Status status = VerifyInline(blob, first_block, end_block, read);
      const absl::Duration spent = absl::Now() - start;
      budget.Charge(start, spent, options_.budget);
      metrics_->ObserveVerify(DispatchPath::kInline, spent);
      if (!status.ok() || read->verified()) {
        std::move(done)(status);
        return;
      }
      decision = {DispatchPath::kPool, DispatchReason::kCacheMiss};
    }
    request->on_pool = true;
    Place(request, decision);
  }
  Submit(blob, request->priority_class, first_block, end_block, read, cancelled,
         std::move(done));
}

absl::Status Dispatcher::VerifyInline(VerifiedBlob* blob, uint64_t first_block,
                                      uint64_t end_block,
                                      BlockRead* read) const {
  RETURN_IF_ERROR(blob->Load(first_block, end_block, read));
  RETURN_IF_ERROR(blob->VerifyCached(read));
  if (options_.mode == DispatchMode::kInline) return blob->VerifyRest(read);
  return absl::OkStatus();
}

void Dispatcher::Place(RequestDispatch* request, DispatchDecision decision) {
  // The first placement, and a fallback to the pool, count; later responses
  // of a request on the same path do not.
  if (request->placed && decision.path == DispatchPath::kInline) return;
  request->placed = true;
  metrics_->CountPlacement(decision.path, request->priority_class,
                           decision.reason);
}

void Dispatcher::Submit(VerifiedBlob* blob, PriorityClass priority_class,
                        uint64_t first_block, uint64_t end_block,
                        BlockRead* read, const std::atomic<bool>* cancelled,
                        Done done) {
  pool_->Submit(
      CurrentCpu(), priority_class,
      [this, blob, priority_class, first_block, end_block, read, cancelled,
       done = std::move(done)](absl::Duration queue_wait) mutable {
        metrics_->ObserveQueueWait(priority_class, queue_wait);
        if (cancelled != nullptr && cancelled->load()) {
          std::move(done)(absl::CancelledError("the client went away"));
          return;
        }
        const absl::Time start = absl::Now();
        absl::Status status = absl::OkStatus();
        if (!read->loaded) status = blob->Load(first_block, end_block, read);
        if (status.ok()) status = blob->VerifyRest(read);
        metrics_->ObserveVerify(DispatchPath::kPool, absl::Now() - start);
        std::move(done)(status);
      });
}

}  // namespace verity::server
