// Implements ScrapeMetrics.

#include "server/scrape_metrics.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "server/metrics/process_metrics.h"

namespace verity::server {
namespace {

// One family with a sample per tier.
prometheus::MetricFamily ByTier(const char* name, const char* help,
                                prometheus::MetricType type, double memory,
                                double disk) {
  prometheus::MetricFamily family =
      OneSample(name, help, type, memory, {{"tier", "memory"}});
  family.metric.push_back(
      OneSample(name, help, type, disk, {{"tier", "disk"}}).metric.front());
  return family;
}

void AddCacheMetrics(const SlabCacheStats& stats,
                     std::vector<prometheus::MetricFamily>& families) {
  using prometheus::MetricType;
  auto number = [](uint64_t n) { return static_cast<double>(n); };
  families.push_back(ByTier(
      "verityd_cache_hits_total",
      "Slab reads of a remote store's bytes answered by the cache, by tier",
      MetricType::Counter, number(stats.memory_hits), number(stats.disk_hits)));
  families.push_back(OneSample(
      "verityd_cache_misses_total",
      "Slab reads of a remote store's bytes that waited for the store",
      MetricType::Counter, number(stats.misses)));
  families.push_back(OneSample(
      "verityd_cache_read_ahead_total",
      "Slabs fetched from the remote store before a read asked for them",
      MetricType::Counter, number(stats.read_ahead)));
  families.push_back(
      OneSample("verityd_cache_discarded_total",
                "Cached slabs dropped because their bytes failed verification",
                MetricType::Counter, number(stats.discarded)));
  families.push_back(OneSample(
      "verityd_cache_disk_write_failures_total",
      "Slabs the disk cache did not write (queue full or write failed)",
      MetricType::Counter, number(stats.disk_failures)));
  families.push_back(ByTier(
      "verityd_cache_bytes", "Bytes of a remote store's blobs cached, by tier",
      MetricType::Gauge, number(stats.memory_bytes), number(stats.disk_bytes)));
}

}  // namespace

std::vector<prometheus::MetricFamily> ScrapeMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  families.push_back(
      OneSample("verityd_active_streams", "Read and Put streams in progress",
                MetricType::Gauge, state_->active_streams.load()));
  // A store that does not keep count (a bucket) reports neither.
  if (const std::optional<StoreTotals> totals = store_->Totals()) {
    families.push_back(OneSample("verityd_blobs", "Blobs in the store",
                                 MetricType::Gauge,
                                 static_cast<double>(totals->blobs)));
    families.push_back(
        OneSample("verityd_store_bytes", "Data bytes of the blobs in the store",
                  MetricType::Gauge, static_cast<double>(totals->bytes)));
  }
  if (quota_ != nullptr) {
    families.push_back(
        OneSample("verityd_store_quota_bytes",
                  "The most data bytes the store holds (--max_store_bytes)",
                  MetricType::Gauge, static_cast<double>(quota_->max_bytes())));
    families.push_back(OneSample(
        "verityd_store_quota_used_bytes",
        "Data bytes of the quota used: stored (as this server last counted a "
        "store that keeps no count, and stored since) and being stored",
        MetricType::Gauge, static_cast<double>(quota_->Used())));
  }
  families.push_back(OneSample(
      "verityd_store_up",
      "1 while the store answers its health probe (always 1 for a local one)",
      MetricType::Gauge, state_->store_up.load() ? 1 : 0));
  if (cache_ != nullptr) AddCacheMetrics(cache_->cache_stats(), families);
  families.push_back(
      OneSample("verityd_build_info", "The running verityd's version, always 1",
                MetricType::Gauge, 1, {{"version", kVerityVersion}}));
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
  return families;
}

}  // namespace verity::server
