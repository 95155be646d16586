// What `verity sync` counts, on its optional /metrics endpoint.

#ifndef VERITYD_CLIENT_SYNC_SYNC_METRICS_H_
#define VERITYD_CLIENT_SYNC_SYNC_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "verity/tree.h"

namespace verity::sync {

// Thread-safe (prometheus-cpp's metrics are).
class SyncMetrics {
 public:
  SyncMetrics();
  std::shared_ptr<prometheus::Registry> registry() { return registry_; }

  // A successful attempt at `when`: the newest version is in place.
  void Succeeded(absl::Time when);
  // A switch to a new version, and what writing it took.
  void Switched(const sdk::FetchTreeResult& result);
  // A failed attempt, by its status code (data_loss: a refused statement or
  // a bad block; unavailable; not_found; ...).
  void Failed(const absl::Status& status);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge& last_success_;
  prometheus::Counter& switches_;
  prometheus::Family<prometheus::Counter>& failures_;
  prometheus::Counter& files_fetched_;
  prometheus::Counter& files_reused_;
  prometheus::Counter& bytes_fetched_;
};

}  // namespace verity::sync

#endif  // VERITYD_CLIENT_SYNC_SYNC_METRICS_H_
