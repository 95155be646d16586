// Implements the upkeep metrics.

#include "server/upkeep/upkeep_metrics.h"

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

const char* ResultOf(const absl::Status& status) {
  return status.ok() ? "ok" : absl::IsAborted(status) ? "busy" : "error";
}

prometheus::Family<prometheus::Counter>& Results(prometheus::Registry& registry,
                                                 const char* name,
                                                 const char* help) {
  prometheus::Family<prometheus::Counter>& family =
      prometheus::BuildCounter().Name(name).Help(help).Register(registry);
  for (const char* result : {"ok", "busy", "error"}) {
    family.Add({{"result", result}});
  }
  return family;
}

}  // namespace

CollectionMetrics::CollectionMetrics(prometheus::Registry& registry)
    : runs_(Results(registry, "verityd_gc_runs_total",
                    "Garbage collections, by result: ok, busy (another "
                    "replica held the lease) or error")),
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
      stored_blobs_(
          Gauge(registry, "verityd_gc_stored_blobs",
                "Blobs stored, as the last collection or dry run counted "
                "them")),
      stored_bytes_(
          Gauge(registry, "verityd_gc_stored_bytes",
                "Data bytes stored, as the last collection or dry run counted "
                "them")),
      reachable_(Gauge(registry, "verityd_gc_reachable_blobs",
                       "Stored blobs a name's retained history reached, as "
                       "the last collection found them")),
      reachable_bytes_(Gauge(registry, "verityd_gc_reachable_bytes",
                             "Data bytes of the reachable blobs, as the last "
                             "collection found them")),
      collectable_(Gauge(registry, "verityd_gc_collectable_blobs",
                         "Blobs a collection would free, as the last dry run "
                         "(verity du) found them; 0 after a collection")),
      collectable_bytes_(Gauge(registry, "verityd_gc_collectable_bytes",
                               "Data bytes of the blobs a collection would "
                               "free, as the last dry run found them")) {}

void CollectionMetrics::Collected(const absl::Status& status,
                                  const CollectReport* report, bool dry_run,
                                  absl::Time now) {
  if (!dry_run) runs_.Add({{"result", ResultOf(status)}}).Increment();
  if (report == nullptr) return;
  stored_blobs_.Set(static_cast<double>(report->blobs));
  stored_bytes_.Set(static_cast<double>(report->bytes));
  reachable_.Set(static_cast<double>(report->reachable));
  reachable_bytes_.Set(static_cast<double>(report->reachable_bytes));
  collectable_.Set(dry_run ? static_cast<double>(report->freed) : 0);
  collectable_bytes_.Set(dry_run ? static_cast<double>(report->freed_bytes)
                                 : 0);
  if (dry_run) return;
  freed_blobs_.Increment(static_cast<double>(report->freed));
  freed_bytes_.Increment(static_cast<double>(report->freed_bytes));
  last_success_.Set(absl::ToDoubleSeconds(now - absl::UnixEpoch()));
  duration_.Set(absl::ToDoubleSeconds(report->took));
}

ScrubMetrics::ScrubMetrics(prometheus::Registry& registry)
    : passes_(Results(registry, "verityd_scrub_passes_total",
                      "Scrub passes (or the part of one this server ran), by "
                      "result: ok, busy (another replica held the lease) or "
                      "error")),
      blobs_(Counter(registry, "verityd_scrub_checked_blobs_total",
                     "Blobs the scrub checked whole")),
      bytes_(Counter(registry, "verityd_scrub_checked_bytes_total",
                     "Bytes the scrub read and checked: data, tree and FEC "
                     "area")),
      bad_blocks_(Counter(registry, "verityd_scrub_bad_blocks_total",
                          "Blocks the scrub found bad: data and tree blocks "
                          "that failed their check, FEC-area blocks that did "
                          "not match")),
      repaired_blocks_(Counter(registry, "verityd_scrub_repaired_blocks_total",
                               "Of the bad blocks, those rebuilt from FEC (or "
                               "encoded again) and written back")),
      unrepairable_(Counter(registry, "verityd_scrub_unrepairable_blobs_total",
                            "Blobs the scrub found damaged beyond repair, "
                            "reported as a read reports them")),
      interval_(Gauge(registry, "verityd_scrub_interval_seconds",
                      "How often the store is scrubbed (--scrub_interval; "
                      "0: only when asked)")),
      last_complete_(Gauge(registry,
                           "verityd_scrub_last_complete_timestamp_seconds",
                           "When the last scrub pass over the store completed "
                           "(Unix time), or, before any has, when this server "
                           "began to scrub")) {}

void ScrubMetrics::SetInterval(absl::Duration interval) {
  interval_.Set(absl::ToDoubleSeconds(interval));
}

void ScrubMetrics::SetLastComplete(absl::Time time) {
  last_complete_.Set(absl::ToDoubleSeconds(time - absl::UnixEpoch()));
}

void ScrubMetrics::Checked(const BlobScrub& blob) {
  blobs_.Increment();
  bytes_.Increment(static_cast<double>(blob.bytes));
  bad_blocks_.Increment(static_cast<double>(blob.bad_blocks));
  repaired_blocks_.Increment(static_cast<double>(blob.repaired_blocks));
  if (!blob.damage.ok()) unrepairable_.Increment();
}

void ScrubMetrics::PassEnded(const absl::Status& status) {
  passes_.Add({{"result", ResultOf(status)}}).Increment();
}

}  // namespace verity::server
