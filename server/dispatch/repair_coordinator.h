// FEC repairs, one per RS group at a time: a read that meets a bad block asks
// for its group's repair and waits for the result, which every read of that
// group waiting meanwhile shares. Repairs run on a few threads of their own,
// the most urgent first (RT before BE before IDLE, with ClassQueue's aging),
// each at the class of its most urgent waiter.

#ifndef VERITYD_SERVER_DISPATCH_REPAIR_COORDINATOR_H_
#define VERITYD_SERVER_DISPATCH_REPAIR_COORDINATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "lib/base/executor.h"
#include "lib/base/priority_class.h"
#include "server/dispatch/class_queue.h"
#include "server/dispatch/dispatch_metrics.h"
#include "server/store/verified_blob.h"

namespace verity::server {

struct RepairCoordinatorOptions {
  // Threads that run repairs: each blocks on a whole RS group's reads and a
  // durable write.
  int threads = 2;
  // RS groups queued or under repair; a repair of one more is refused.
  size_t max_groups = 256;
  // How long a less urgent repair yields to more urgent ones.
  ClassQueueOptions order;
  // Thread names: NAME/0, NAME/1, ...; at most 12 bytes.
  std::string name = "fec-repair";
  // Receives a line per repair that rebuilt blocks or failed. Empty: none.
  std::function<void(absl::string_view)> log;
};

// Thread-safe.
class RepairCoordinator {
 public:
  // What a repair found: how many blocks it rebuilt and wrote back (0: the
  // bad block checks good now), or why it could not (RepairFecGroup()).
  using Result = absl::StatusOr<int>;
  using Done = absl::AnyInvocable<void(const Result&) &&>;
  // The repair itself; RepairFecGroup() but in tests.
  using RepairFn = std::function<Result(VerifiedBlob& blob, uint64_t bad)>;

  // `metrics` (may be null) counts each repair once, whatever its waiters.
  RepairCoordinator(const RepairCoordinatorOptions& options,
                    std::shared_ptr<DispatchMetrics> metrics);
  RepairCoordinator(const RepairCoordinatorOptions& options,
                    std::shared_ptr<DispatchMetrics> metrics, RepairFn repair);
  RepairCoordinator(const RepairCoordinator&) = delete;
  RepairCoordinator& operator=(const RepairCoordinator&) = delete;
  // Runs the repairs queued, then joins the threads.
  ~RepairCoordinator() = default;

  // Repairs the RS group of the block `bad` names (BadBlockOf(); `blob` has
  // an FEC area) for a read of class `priority`, and hands the result to
  // `done` on a repair thread, never inside this call. A group queued or
  // under repair (by digest, whichever VerifiedBlob holds it) is not
  // repaired again: `done` joins its waiters, and a queued one moves up to
  // `priority` if that is more urgent. A waiter that joins a repair under
  // way shares its result, which covers the blocks bad when it read the
  // group. RESOURCE_EXHAUSTED, with `done` dropped unrun, if max_groups
  // other groups are queued or under repair; INVALID_ARGUMENT if `bad`
  // names no block.
  absl::Status Repair(std::shared_ptr<VerifiedBlob> blob,
                      const absl::Status& bad, PriorityClass priority,
                      Done done) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // One RS group queued or under repair.
  struct Pending {
    std::shared_ptr<VerifiedBlob> blob;
    uint64_t bad = 0;
    std::string why;  // the first waiter's error, for the log
    std::vector<Done> waiters;
    int rank = 0;  // the most urgent waiter's ServiceRank()
    bool running = false;
  };

  // Pops one entry of queue_ and runs its group's repair, unless the group
  // is under repair or done already.
  void RunNext() ABSL_LOCKS_EXCLUDED(mu_);
  void Report(const Pending& pending, const Result& result) const;

  const RepairCoordinatorOptions options_;
  const std::shared_ptr<DispatchMetrics> metrics_;
  const RepairFn repair_;
  absl::Mutex mu_;
  // By "digest/group".
  absl::flat_hash_map<std::string, Pending> groups_ ABSL_GUARDED_BY(mu_);
  // Group keys to run, one entry per class a group was queued at: the first
  // popped runs it, the rest find it running or gone and are skipped.
  ClassQueue<std::string> queue_ ABSL_GUARDED_BY(mu_);
  // A RunNext() task per entry of queue_. Last: destroyed first, running
  // what is queued while the members above still exist.
  Executor threads_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_REPAIR_COORDINATOR_H_
