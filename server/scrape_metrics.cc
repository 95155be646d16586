// Implements ScrapeMetrics.

#include "server/scrape_metrics.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "server/metrics/process_metrics.h"

namespace verity::server {

std::vector<prometheus::MetricFamily> ScrapeMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  families.push_back(
      OneSample("verityd_active_streams", "Read and Put streams in progress",
                MetricType::Gauge, context_->active_streams.load()));
  // A store that does not keep count (a bucket) reports neither.
  if (const std::optional<StoreTotals> totals = context_->store->Totals()) {
    families.push_back(OneSample("verityd_blobs", "Blobs in the store",
                                 MetricType::Gauge,
                                 static_cast<double>(totals->blobs)));
    families.push_back(
        OneSample("verityd_store_bytes", "Data bytes of the blobs in the store",
                  MetricType::Gauge, static_cast<double>(totals->bytes)));
  }
  families.push_back(
      OneSample("verityd_build_info", "The running verityd's version, always 1",
                MetricType::Gauge, 1, {{"version", kVerityVersion}}));
  if (pool_ != nullptr) {
    families.push_back(OneSample(
        "verityd_verify_pool_info",
        "The verification pool's threads and the CPU scheduling each class "
        "runs at, always 1",
        MetricType::Gauge, 1,
        {{"threads", absl::StrCat(pool_->threads)},
         {"pinned", pool_->pinned ? "true" : "false"},
         {"rt_policy", absl::StrCat(pool_->policy, " ", pool_->priority)},
         {"be_policy", absl::StrCat(pool_->be_policy, " ", pool_->be_priority)},
         {"idle_policy",
          absl::StrCat(pool_->idle_policy, " ", pool_->idle_priority)}}));
  }
  return families;
}

}  // namespace verity::server
