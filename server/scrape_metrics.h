// The metrics verityd computes when scraped rather than on every call: the
// streams in flight, the store's size and whether it answers, the remote
// store's cache, the build, and what scheduling the verification pool
// obtained.

#ifndef VERITYD_SERVER_SCRAPE_METRICS_H_
#define VERITYD_SERVER_SCRAPE_METRICS_H_

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <vector>

#include "server/dispatch/verify_pool.h"
#include "server/rpc/service_state.h"
#include "server/store/cache/caching_store.h"
#include "server/store/quota_store.h"

namespace verity::server {

// The version verityd_build_info reports.
inline constexpr char kVerityVersion[] = "0.5.0";

class ScrapeMetrics : public prometheus::Collectable {
 public:
  // What it is given must outlive it; `cache` may be null (a local store).
  // `cache` and `quota` may be null: none.
  ScrapeMetrics(const ServiceState* state, const Store* store,
                const PoolScheduling* pool, const CachingStore* cache,
                const QuotaStore* quota)
      : state_(state),
        store_(store),
        pool_(pool),
        cache_(cache),
        quota_(quota) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const ServiceState* const state_;
  const Store* const store_;
  const PoolScheduling* const pool_;
  const CachingStore* const cache_;
  const QuotaStore* const quota_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_SCRAPE_METRICS_H_
