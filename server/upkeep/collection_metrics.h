// Metrics of garbage collection: verityd_gc_runs_total{result} (ok, busy:
// another replica held the lease, error), verityd_gc_freed_blobs_total,
// verityd_gc_freed_bytes_total, and of the last collection that completed:
// verityd_gc_last_success_timestamp_seconds, verityd_gc_duration_seconds,
// verityd_gc_stored_blobs, verityd_gc_stored_bytes, verityd_gc_reachable_blobs.
// Dry runs count nowhere.

#ifndef VERITYD_SERVER_UPKEEP_COLLECTION_METRICS_H_
#define VERITYD_SERVER_UPKEEP_COLLECTION_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/upkeep/collector.h"

namespace verity::server {

// Thread-safe.
class CollectionMetrics {
 public:
  // `registry` must outlive this.
  explicit CollectionMetrics(prometheus::Registry& registry);

  // A collection (not a dry run) ended at `now` with `status` (ABORTED:
  // another held the lease); `report` if it completed.
  void Collected(const absl::Status& status, const CollectReport* report,
                 absl::Time now);

 private:
  prometheus::Family<prometheus::Counter>& runs_;
  prometheus::Counter& freed_blobs_;
  prometheus::Counter& freed_bytes_;
  prometheus::Gauge& last_success_;
  prometheus::Gauge& duration_;
  prometheus::Gauge& stored_blobs_;
  prometheus::Gauge& stored_bytes_;
  prometheus::Gauge& reachable_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_COLLECTION_METRICS_H_
