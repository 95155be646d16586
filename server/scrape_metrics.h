// The metrics verityd computes when scraped rather than on every call: the
// streams in flight, the store's size, the build, and what scheduling the
// verification pool obtained.

#ifndef VERITYD_SERVER_SCRAPE_METRICS_H_
#define VERITYD_SERVER_SCRAPE_METRICS_H_

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <vector>

#include "server/dispatch/verify_pool.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// The version verityd_build_info reports.
inline constexpr char kVerityVersion[] = "0.5.0";

class ScrapeMetrics : public prometheus::Collectable {
 public:
  // `context` must outlive this; `pool` is null without a pool (inline mode).
  ScrapeMetrics(const ServiceContext* context, const PoolScheduling* pool)
      : context_(context), pool_(pool) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const ServiceContext* const context_;
  const PoolScheduling* const pool_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_SCRAPE_METRICS_H_
