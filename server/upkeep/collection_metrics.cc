// Implements the garbage collection metrics.

#include "server/upkeep/collection_metrics.h"

namespace verity::server {
namespace {

prometheus::Gauge& Gauge(prometheus::Registry& registry, const char* name,
                         const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add(
      {});
}

prometheus::Counter& Counter(prometheus::Registry& registry, const char* name,
                             const char* help) {
  return prometheus::BuildCounter()
      .Name(name)
      .Help(help)
      .Register(registry)
      .Add({});
}

}  // namespace

CollectionMetrics::CollectionMetrics(prometheus::Registry& registry)
    : runs_(prometheus::BuildCounter()
                .Name("verityd_gc_runs_total")
                .Help("Garbage collections, by result: ok, busy (another "
                      "replica held the lease) or error")
                .Register(registry)),
      freed_blobs_(Counter(registry, "verityd_gc_freed_blobs_total",
                           "Blobs garbage collection deleted")),
      freed_bytes_(Counter(registry, "verityd_gc_freed_bytes_total",
                           "Data bytes of the blobs garbage collection "
                           "deleted")),
      last_success_(Gauge(registry, "verityd_gc_last_success_timestamp_seconds",
                          "When the last garbage collection that completed "
                          "ended (Unix time; 0: none yet)")),
      duration_(Gauge(registry, "verityd_gc_duration_seconds",
                      "How long the last garbage collection that completed "
                      "took")),
      stored_blobs_(Gauge(registry, "verityd_gc_stored_blobs",
                          "Blobs stored, as the last collection counted "
                          "them")),
      stored_bytes_(Gauge(registry, "verityd_gc_stored_bytes",
                          "Data bytes stored, as the last collection counted "
                          "them")),
      reachable_(Gauge(registry, "verityd_gc_reachable_blobs",
                       "Stored blobs a name's retained history reached, as "
                       "the last collection found them")) {
  for (const char* result : {"ok", "busy", "error"}) {
    runs_.Add({{"result", result}});
  }
}

void CollectionMetrics::Collected(const absl::Status& status,
                                  const CollectReport* report, absl::Time now) {
  const char* result = status.ok()               ? "ok"
                       : absl::IsAborted(status) ? "busy"
                                                 : "error";
  runs_.Add({{"result", result}}).Increment();
  if (report == nullptr) return;
  freed_blobs_.Increment(static_cast<double>(report->freed));
  freed_bytes_.Increment(static_cast<double>(report->freed_bytes));
  last_success_.Set(absl::ToDoubleSeconds(now - absl::UnixEpoch()));
  duration_.Set(absl::ToDoubleSeconds(report->took));
  stored_blobs_.Set(static_cast<double>(report->blobs));
  stored_bytes_.Set(static_cast<double>(report->bytes));
  reachable_.Set(static_cast<double>(report->reachable));
}

}  // namespace verity::server
