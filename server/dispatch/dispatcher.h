// Runs a read's verification where the dispatch policy puts it: inline on the
// calling (RPC completion) thread, or on the verification pool's thread for
// the caller's CPU. A request that starts inline and meets a tree block not
// cached yet moves to the pool and continues from its first unverified block,
// without reading or hashing anything twice.

#ifndef VERITYD_SERVER_DISPATCH_DISPATCHER_H_
#define VERITYD_SERVER_DISPATCH_DISPATCHER_H_

#include <string>

#include "absl/status/status.h"
#include "server/dispatch/chunk_reader.h"
#include "server/dispatch/dispatch_metrics.h"
#include "server/dispatch/dispatch_policy.h"
#include "server/dispatch/inline_budget.h"
#include "server/dispatch/inline_tuner.h"
#include "server/dispatch/read_job.h"
#include "server/dispatch/verify_pool.h"

namespace verity::server {

struct DispatchOptions {
  DispatchMode mode = DispatchMode::kAdaptive;
  // Calibrated at start-up unless given (see Calibrate()); used unless a
  // tuner is given, which then owns the limits.
  InlineLimits limits = InlineLimits::Uniform(8192);
  // Not owned; must outlive the Dispatcher. Null: the limits stay fixed.
  InlineTuner* tuner = nullptr;
  InlineBudgetOptions budget;
  // Data bytes past the current chunk whose reading starts before it is
  // verified: for a remote store, whose reads are round trips. 0: none.
  uint64_t read_ahead_bytes = 0;
};

// The verifying ChunkReader. Thread-safe.
class Dispatcher final : public ChunkReader {
 public:
  // `pool` may be null only in inline mode. Both must outlive this.
  Dispatcher(const DispatchOptions& options, VerifyPool* pool,
             DispatchMetrics* metrics);

  // Starts reading the tree blocks the whole request needs into the page
  // cache, without waiting for them.
  void Begin(const ReadJob& job) override;

  // Loads the job's chunk and verifies it, then calls `done`: before returning
  // if it all ran inline, else on a pool thread. Pool work that finds the job
  // cancelled is skipped and reports CANCELLED. A chunk that fails
  // verification while the store kept a copy of its bytes (a cache) is read
  // once more from where the blob is stored: a bad cached copy is not a bad
  // blob.
  void Read(ReadJob* job, Done done) override;

  absl::StatusOr<std::string> TreeBlock(const VerifiedBlob& blob,
                                        TreeBlockId id) const override;

  const DispatchOptions& options() const { return options_; }

 private:
  // Starts reading the next read_ahead_bytes after the job's chunk.
  void ReadAhead(const ReadJob& job) const;
  // Read() without the second attempt.
  void ReadChunk(ReadJob* job, Done done);
  // Load + VerifyCached, and in forced-inline mode VerifyRest too.
  absl::Status VerifyInline(ReadJob* job) const;
  void Place(ReadJob* job, DispatchDecision decision);
  // Verifies the rest of the chunk on the pool; a local chunk is fetched
  // there, a remote one first.
  void Submit(ReadJob* job, Done done);
  void Verify(ReadJob* job, bool fetch, Done done);
  // The tuner's limits if there is one, else the options'.
  InlineLimits Limits() const;
  // Feeds a verification of `bytes` to the tuner, which may close a period.
  void Tune(uint64_t bytes, absl::Duration spent, absl::Time now);

  const DispatchOptions options_;
  VerifyPool* const pool_;
  DispatchMetrics* const metrics_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_DISPATCHER_H_
