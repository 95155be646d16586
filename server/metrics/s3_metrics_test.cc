#include "server/metrics/s3_metrics.h"

#include <prometheus/registry.h>

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace verity::server {
namespace {

// "name{label=value,...}" -> value, for counters and histogram counts.
std::map<std::string, double> Samples(prometheus::Registry& registry) {
  std::map<std::string, double> samples;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::string key = family.name + "{";
      for (const auto& label : metric.label) {
        key += label.name + "=" + label.value + ",";
      }
      key += "}";
      samples[key] = family.type == prometheus::MetricType::Histogram
                         ? static_cast<double>(metric.histogram.sample_count)
                         : metric.counter.value;
    }
  }
  return samples;
}

TEST(S3MetricsTest, CountsByOperationAndStatus) {
  prometheus::Registry registry;
  S3Metrics metrics(registry);
  metrics.Observe("GetObject", 206, absl::Milliseconds(20), 1000);
  metrics.Observe("GetObject", 206, absl::Milliseconds(30), 24);
  metrics.Observe("GetObject", 0, absl::Seconds(5), 0);
  metrics.Observe("PutObject", 412, absl::Milliseconds(3), 200);
  std::map<std::string, double> samples = Samples(registry);
  EXPECT_EQ(samples["verityd_s3_requests_total{op=GetObject,status=206,}"], 2);
  EXPECT_EQ(samples["verityd_s3_requests_total{op=GetObject,status=error,}"],
            1);
  EXPECT_EQ(samples["verityd_s3_requests_total{op=PutObject,status=412,}"], 1);
  EXPECT_EQ(
      samples["verityd_s3_request_duration_seconds{op=GetObject,status=206,}"],
      2);
  EXPECT_EQ(
      samples
          ["verityd_s3_request_duration_seconds{op=GetObject,status=error,}"],
      1);
  EXPECT_EQ(
      samples["verityd_s3_request_duration_seconds{op=PutObject,status=412,}"],
      1);
  EXPECT_EQ(samples["verityd_s3_received_bytes_total{}"], 1224);
}

}  // namespace
}  // namespace verity::server
