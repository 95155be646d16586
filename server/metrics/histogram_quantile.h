// Quantiles of a collected Prometheus histogram, for log lines and benchmark
// reports.

#ifndef VERITYD_SERVER_METRICS_HISTOGRAM_QUANTILE_H_
#define VERITYD_SERVER_METRICS_HISTOGRAM_QUANTILE_H_

#include <prometheus/client_metric.h>

#include <string>

namespace verity::server {

// The q-quantile, interpolated within its bucket as Prometheus's
// histogram_quantile() does; 0 if the histogram is empty.
double HistogramQuantile(const prometheus::ClientMetric::Histogram& histogram,
                         double q);

// "p50_us=X p99_us=Y p999_us=Z": the quantiles the "stats ..." log lines
// carry, in microseconds.
std::string QuantileFieldsUs(
    const prometheus::ClientMetric::Histogram& histogram);

}  // namespace verity::server

#endif  // VERITYD_SERVER_METRICS_HISTOGRAM_QUANTILE_H_
