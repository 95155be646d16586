// Runs a read's verification where the dispatch policy puts it: inline on the
// calling (RPC completion) thread, or on the verification pool's thread for
// the caller's CPU. A request that starts inline and meets a tree block not
// cached yet moves to the pool and continues from its first unverified block,
// without reading or hashing anything twice.

#ifndef VERITYD_SERVER_DISPATCH_DISPATCHER_H_
#define VERITYD_SERVER_DISPATCH_DISPATCHER_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "server/dispatch/chunk_reader.h"
#include "server/dispatch/dispatch_metrics.h"
#include "server/dispatch/dispatch_policy.h"
#include "server/dispatch/inline_budget.h"
#include "server/dispatch/inline_tuner.h"
#include "server/dispatch/read_job.h"
#include "server/dispatch/repair_coordinator.h"
#include "server/dispatch/verify_pool.h"

namespace verity::server {

struct DispatchOptions {
  DispatchMode mode = DispatchMode::kAdaptive;
  // Calibrated at start-up unless given (see Calibrate()); used unless a
  // tuner is given, which then owns the limits.
  InlineLimits limits = InlineLimits::Uniform(8192);
  // Shared with whoever reports its changes. Null: the limits stay fixed.
  std::shared_ptr<InlineTuner> tuner;
  InlineBudgetOptions budget;
  // Data bytes past the current chunk whose reading starts before it is
  // verified: for a remote store, whose reads are round trips. 0: none.
  uint64_t read_ahead_bytes = 0;
  // Runs FEC repairs, one per RS group at a time; shared with whoever else
  // asks for repairs (the scrub), so it outlives each of them. Null: a bad
  // block fails its read, FEC or not.
  std::shared_ptr<RepairCoordinator> repairs;
};

// The verifying ChunkReader. Thread-safe.
class Dispatcher final : public ChunkReader {
 public:
  // `pool` finishes what does not finish inline, in every mode.
  Dispatcher(const DispatchOptions& options, std::shared_ptr<VerifyPool> pool,
             std::shared_ptr<DispatchMetrics> metrics);
  // Waits until every read handed to ReadLater is done (its `done` run or
  // dropped, wherever it waits: the pool, a store fetch, a repair): nothing
  // of this dispatcher runs after.
  ~Dispatcher() override ABSL_LOCKS_EXCLUDED(mu_);

  // Starts reading the tree blocks the whole request needs into the page
  // cache, without waiting for them.
  void Begin(const ReadJob& job) override;

  // Verifies the job's chunk on the calling thread if the policy puts it
  // inline and the store has its data here, as far as the cached tree
  // reaches (in forced-inline mode, all of it). nullopt if the chunk goes to
  // the pool, or meets a tree block or data not here: ReadLater() then
  // continues from its first unverified block, reading and hashing nothing
  // twice.
  std::optional<absl::Status> TryReadNow(ReadJob& job) override;

  // Finishes the chunk on the pool, in every mode (what the store fetches
  // comes back to the pool to be verified). Pool work that finds the job
  // cancelled is skipped and reports CANCELLED. A chunk that fails
  // verification while the store kept a copy of its bytes (a cache) is read
  // once more from where the blob is stored: a bad cached copy is not a bad
  // blob. A bad block of a blob with an FEC area is repaired (by the repair
  // coordinator, at the read's class), and the chunk read again; a failed
  // repair is the read's DATA_LOSS.
  void ReadLater(std::shared_ptr<ReadJob> job, Done done) override;

  absl::StatusOr<std::string> TreeBlock(const VerifiedBlob& blob,
                                        TreeBlockId id) const override;

  const DispatchOptions& options() const { return options_; }

 private:
  // Starts reading the next read_ahead_bytes after the job's chunk.
  void ReadAhead(const ReadJob& job) const;
  // TryReadNow() of a chunk the policy put inline.
  std::optional<absl::Status> TryInline(ReadJob& job, DispatchDecision decision,
                                        absl::Time start);
  // Counts the request's placement (once, and a fallback to the pool).
  void Place(ReadJob& job, DispatchDecision decision);
  // Moves the request to the pool for good.
  void ToPool(ReadJob& job, DispatchDecision decision);
  // `done`, counted as a read under way until it is run or dropped.
  Done Counted(Done done) ABSL_LOCKS_EXCLUDED(mu_);
  void EndRead() ABSL_LOCKS_EXCLUDED(mu_);
  // Queues the chunk's work on the pool.
  void Submit(std::shared_ptr<ReadJob> job, Done done);
  // On a pool thread: finishes the chunk now, or fetches what it lacks and
  // submits it again.
  void Work(std::shared_ptr<ReadJob> job, Done done);
  // Reports `status`, unless it is a DATA_LOSS of a copy the store dropped,
  // or of a block FEC can repair: then the chunk is read again.
  void Complete(std::shared_ptr<ReadJob> job, absl::Status status, Done done);
  // True if `status` names a bad block of the job's blob, which has an FEC
  // area, and the chunk has repairs left.
  bool CanRepair(const ReadJob& job, const absl::Status& status) const;
  // Has the repair coordinator repair the block `status` names, then reads
  // the chunk again; reports `status` if the repair fails.
  void Repair(std::shared_ptr<ReadJob> job, absl::Status status, Done done);
  // The tuner's limits if there is one, else the options'.
  InlineLimits Limits() const;
  // Feeds a verification of `bytes` to the tuner, which may close a period.
  void Tune(uint64_t bytes, absl::Duration spent, absl::Time now);

  const DispatchOptions options_;
  const std::shared_ptr<VerifyPool> pool_;
  const std::shared_ptr<DispatchMetrics> metrics_;
  absl::Mutex mu_;
  int64_t reads_ ABSL_GUARDED_BY(mu_) = 0;  // under way (Counted)
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_DISPATCHER_H_
