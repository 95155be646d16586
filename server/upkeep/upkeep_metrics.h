// Metrics of a store's upkeep.
//
// Garbage collection: verityd_gc_runs_total{result} (ok, busy:
// another replica held the lease, error), verityd_gc_freed_blobs_total,
// verityd_gc_freed_bytes_total, and of the last collection that completed:
// verityd_gc_last_success_timestamp_seconds, verityd_gc_duration_seconds,
// and of the last collection or dry run (`verity du`) that completed:
// verityd_gc_stored_blobs, verityd_gc_stored_bytes, verityd_gc_reachable_blobs,
// verityd_gc_reachable_bytes, verityd_gc_collectable_blobs and _bytes (what a
// collection would free: 0 after one). Dry runs count in nothing else.
//
// Scrub: verityd_scrub_passes_total{result} (ok, busy, error: a pass or its
// part that this server ran), verityd_scrub_checked_blobs_total,
// verityd_scrub_checked_bytes_total, verityd_scrub_bad_blocks_total,
// verityd_scrub_repaired_blocks_total, verityd_scrub_unrepairable_blobs_total,
// verityd_scrub_interval_seconds (--scrub_interval; 0: off) and
// verityd_scrub_last_complete_timestamp_seconds: when the last pass over the
// store (by any replica) completed, or, before any has, when this server began
// to scrub.

#ifndef VERITYD_SERVER_UPKEEP_COLLECTION_METRICS_H_
#define VERITYD_SERVER_UPKEEP_COLLECTION_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/upkeep/blob_scrub.h"
#include "server/upkeep/collector.h"

namespace verity::server {

// Thread-safe.
class CollectionMetrics {
 public:
  // `registry` must outlive this.
  explicit CollectionMetrics(prometheus::Registry& registry);

  // A collection (or a dry run) ended at `now` with `status` (ABORTED:
  // another held the lease); `report` if it completed.
  void Collected(const absl::Status& status, const CollectReport* report,
                 bool dry_run, absl::Time now);

 private:
  prometheus::Family<prometheus::Counter>& runs_;
  prometheus::Counter& freed_blobs_;
  prometheus::Counter& freed_bytes_;
  prometheus::Gauge& last_success_;
  prometheus::Gauge& duration_;
  prometheus::Gauge& stored_blobs_;
  prometheus::Gauge& stored_bytes_;
  prometheus::Gauge& reachable_;
  prometheus::Gauge& reachable_bytes_;
  prometheus::Gauge& collectable_;
  prometheus::Gauge& collectable_bytes_;
};

// Thread-safe.
class ScrubMetrics {
 public:
  // `registry` must outlive this.
  explicit ScrubMetrics(prometheus::Registry& registry);

  void SetInterval(absl::Duration interval);
  // When the last pass over the store completed (see above).
  void SetLastComplete(absl::Time time);
  // One blob checked.
  void Checked(const BlobScrub& blob);
  // A pass (or its part) ended with `status` (ABORTED: another held the
  // lease).
  void PassEnded(const absl::Status& status);

 private:
  prometheus::Family<prometheus::Counter>& passes_;
  prometheus::Counter& blobs_;
  prometheus::Counter& bytes_;
  prometheus::Counter& bad_blocks_;
  prometheus::Counter& repaired_blocks_;
  prometheus::Counter& unrepairable_;
  prometheus::Gauge& interval_;
  prometheus::Gauge& last_complete_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_COLLECTION_METRICS_H_
