// A server's garbage collections: one when an admin asks (the Collect RPC,
// `verity gc`), and one every interval if set (--gc_interval), one at a time
// in this process (replicas sharing a store take turns by the lease).

#ifndef VERITYD_SERVER_UPKEEP_COLLECTIONS_H_
#define VERITYD_SERVER_UPKEEP_COLLECTIONS_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/store/store.h"
#include "server/upkeep/collector.h"
#include "server/upkeep/upkeep_metrics.h"

namespace verity::server {

struct CollectionsOptions {
  absl::Duration grace = absl::Hours(1);
  // Zero: only when asked.
  absl::Duration interval = absl::ZeroDuration();
  // One line per collection. Must be set.
  std::function<void(absl::string_view)> log;
  // Each collection that completed (dry runs too), with when it began: the
  // data bytes it left stored, as its listing counted them. May be empty.
  std::function<void(uint64_t bytes, absl::Time started)> counted;
};

// Thread-safe. `remove` holds what it deletes through; `metrics` may be
// null.
class Collections {
 public:
  Collections(std::shared_ptr<Store> store, SweepDelete remove,
              std::shared_ptr<CollectionMetrics> metrics,
              CollectionsOptions options);
  // Stop().
  ~Collections();

  // Starts the interval's collections, as `holder` (who this server is in
  // the lease and the log: unique among the replicas, and the same across a
  // restart of one, which may then take back the lease its previous life
  // held). Call once, before RunNow.
  void Start(std::string holder) ABSL_LOCKS_EXCLUDED(mu_);

  // One collection now, after any under way in this process. Blocking.
  absl::StatusOr<CollectReport> RunNow(bool dry_run) ABSL_LOCKS_EXCLUDED(mu_);

  // Ends the interval's thread; a collection under way stops between two
  // pages (CANCELLED). Idempotent.
  void Stop();

 private:
  void Loop();

  const std::shared_ptr<Store> store_;
  const SweepDelete remove_;
  const std::shared_ptr<CollectionMetrics> metrics_;
  const CollectionsOptions options_;
  std::atomic<bool> stopping_{false};
  absl::Notification stop_;
  // Held for a whole collection: one at a time.
  absl::Mutex mu_;
  std::string holder_ ABSL_GUARDED_BY(mu_) = "verityd";
  std::thread thread_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_COLLECTIONS_H_
