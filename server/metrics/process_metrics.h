// The standard process_* metrics Prometheus client libraries export (CPU
// seconds, resident and virtual memory, open and maximum file descriptors,
// start time), read from /proc/self when scraped. prometheus-cpp has none.

#ifndef VERITYD_SERVER_METRICS_PROCESS_METRICS_H_
#define VERITYD_SERVER_METRICS_PROCESS_METRICS_H_

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <vector>

namespace verity::server {

class ProcessMetrics : public prometheus::Collectable {
 public:
  // What /proc cannot tell is left out of the scrape, not reported as 0.
  std::vector<prometheus::MetricFamily> Collect() const override;
};

// A one-sample family of `type` (Gauge or Counter) with `labels`.
prometheus::MetricFamily OneSample(
    const char* name, const char* help, prometheus::MetricType type,
    double value, std::vector<prometheus::ClientMetric::Label> labels = {});

}  // namespace verity::server

#endif  // VERITYD_SERVER_METRICS_PROCESS_METRICS_H_
