// Implements HistogramQuantile().

#include "server/metrics/histogram_quantile.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"

namespace verity::server {

double HistogramQuantile(const prometheus::ClientMetric::Histogram& histogram,
                         double q) {
  if (histogram.sample_count == 0 || histogram.bucket.empty()) return 0;
  const double rank = q * static_cast<double>(histogram.sample_count);
  double lower = 0;
  uint64_t below = 0;
  for (const auto& bucket : histogram.bucket) {
    if (static_cast<double>(bucket.cumulative_count) >= rank) {
      if (std::isinf(bucket.upper_bound)) return lower;
      const double in_bucket =
          static_cast<double>(bucket.cumulative_count - below);
      if (in_bucket == 0) return bucket.upper_bound;
      return lower + (bucket.upper_bound - lower) *
                         (rank - static_cast<double>(below)) / in_bucket;
    }
    lower = bucket.upper_bound;
    below = bucket.cumulative_count;
  }
  return lower;
}

std::string QuantileFieldsUs(
    const prometheus::ClientMetric::Histogram& histogram) {
  return absl::StrFormat("p50_us=%.1f p99_us=%.1f p999_us=%.1f",
                         HistogramQuantile(histogram, 0.5) * 1e6,
                         HistogramQuantile(histogram, 0.99) * 1e6,
                         HistogramQuantile(histogram, 0.999) * 1e6);
}

}  // namespace verity::server
