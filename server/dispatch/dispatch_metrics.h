// What the verification dispatch did, as Prometheus metrics: placements per
// path, class and reason; verification time per path; the pool's queue wait
// per class (the analog of the kernel's workqueue scheduler latency). Every
// child is resolved once here, so the hot path never looks a label up.

#ifndef VERITYD_SERVER_DISPATCH_DISPATCH_METRICS_H_
#define VERITYD_SERVER_DISPATCH_DISPATCH_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/base/priority_class.h"
#include "server/dispatch/dispatch_policy.h"

namespace verity::server {

// Thread-safe.
class DispatchMetrics {
 public:
  // Registers verityd_dispatch_total, verityd_verify_duration_seconds,
  // verityd_verify_queue_wait_seconds, verityd_dispatch_inline_limit_bytes,
  // verityd_fec_repairs_total, verityd_fec_repair_joins_total,
  // verityd_fec_repaired_blocks_total and verityd_fec_repair_failures_total
  // in `registry`, which must outlive this.
  explicit DispatchMetrics(prometheus::Registry& registry);

  void CountPlacement(DispatchPath path, PriorityClass priority_class,
                      DispatchReason reason);
  void ObserveVerify(DispatchPath path, absl::Duration duration);
  void ObserveQueueWait(PriorityClass priority_class, absl::Duration wait);
  // verityd_dispatch_inline_limit_bytes.
  void SetInlineLimit(PriorityClass priority_class, uint64_t bytes);
  // An FEC repair of an RS group ran; a read waited for one already queued
  // or under way instead of starting its own.
  void CountFecRepairRun();
  void CountFecRepairJoined();
  // An FEC repair that rebuilt and wrote back `blocks` blocks, or failed.
  void CountFecRepaired(uint64_t blocks);
  void CountFecRepairFailure();

  // Placements so far; 0 for combinations that cannot happen.
  uint64_t placements(DispatchPath path, PriorityClass priority_class,
                      DispatchReason reason) const;
  uint64_t verify_count(DispatchPath path) const;
  uint64_t queue_wait_count(PriorityClass priority_class) const;
  uint64_t fec_repairs() const;
  uint64_t fec_repair_joins() const;
  uint64_t fec_repaired_blocks() const;
  uint64_t fec_repair_failures() const;

  // One "stats ..." line per non-zero series, with p50/p99/p999 estimated from
  // the buckets: for the log at shutdown and for benchmark scripts.
  std::vector<std::string> Summary() const;

 private:
  using ReasonCounters = std::array<prometheus::Counter*, kNumDispatchReasons>;
  std::array<std::array<ReasonCounters, kNumPriorityClasses>, kNumDispatchPaths>
      placements_{};
  std::array<prometheus::Histogram*, kNumDispatchPaths> verify_{};
  std::array<prometheus::Histogram*, kNumPriorityClasses> queue_wait_{};
  std::array<prometheus::Gauge*, kNumPriorityClasses> inline_limit_{};
  prometheus::Counter* fec_repairs_ = nullptr;
  prometheus::Counter* fec_repair_joins_ = nullptr;
  prometheus::Counter* fec_repaired_blocks_ = nullptr;
  prometheus::Counter* fec_repair_failures_ = nullptr;
};

// Buckets for sub-millisecond work: 1 µs to about 1 s, sqrt(2) apart.
prometheus::Histogram::BucketBoundaries FineLatencyBuckets();

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_DISPATCH_METRICS_H_
