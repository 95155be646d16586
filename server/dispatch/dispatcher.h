// Runs a read's verification where the dispatch policy puts it: inline on the
// calling (RPC completion) thread, or on the verification pool's thread for
// the caller's CPU. A request that starts inline and meets a tree block not
// cached yet moves to the pool and continues from its first unverified block,
// without reading or hashing anything twice.

#ifndef VERITYD_SERVER_DISPATCH_DISPATCHER_H_
#define VERITYD_SERVER_DISPATCH_DISPATCHER_H_

#include <atomic>
#include <cstdint>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "lib/priority_class.h"
#include "server/dispatch/dispatch_metrics.h"
#include "server/dispatch/dispatch_policy.h"
#include "server/dispatch/inline_budget.h"
#include "server/dispatch/verify_pool.h"
#include "server/store/verified_blob.h"

namespace verity::server {

struct DispatchOptions {
  DispatchMode mode = DispatchMode::kAdaptive;
  // Calibrated at start-up unless given (see Calibrate()).
  InlineLimits limits = InlineLimits::Uniform(8192);
  InlineBudgetOptions budget;
};

// One read request's placement, kept across the responses it is sent in.
struct RequestDispatch {
  PriorityClass priority_class = PriorityClass::kNone;
  uint64_t bytes = 0;  // the whole request's data bytes: what limits compare
  bool placed = false;
  bool on_pool = false;  // once on the pool, a request stays there
};

// Thread-safe.
class Dispatcher {
 public:
  // `pool` may be null only in inline mode. Both must outlive this.
  Dispatcher(const DispatchOptions& options, VerifyPool* pool,
             DispatchMetrics* metrics);

  using Done = absl::AnyInvocable<void(absl::Status) &&>;

  // Reads data blocks [first_block, end_block) of `blob` into `read` and
  // verifies them, then calls `done`: before returning if it all ran inline,
  // else on a pool thread. Pool work that finds `*cancelled` set skips the work
  // and reports CANCELLED. Everything passed must stay alive until `done`.
  void Verify(VerifiedBlob* blob, RequestDispatch* request,
              uint64_t first_block, uint64_t end_block, BlockRead* read,
              const std::atomic<bool>* cancelled, Done done);

  const DispatchOptions& options() const { return options_; }

 private:
  // Load + VerifyCached, and in forced-inline mode VerifyRest too.
  absl::Status VerifyInline(VerifiedBlob* blob, uint64_t first_block,
                            uint64_t end_block, BlockRead* read) const;
  void Place(RequestDispatch* request, DispatchDecision decision);
  void Submit(VerifiedBlob* blob, PriorityClass priority_class,
              uint64_t first_block, uint64_t end_block, BlockRead* read,
              const std::atomic<bool>* cancelled, Done done);

  const DispatchOptions options_;
  VerifyPool* const pool_;
  DispatchMetrics* const metrics_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_DISPATCHER_H_
