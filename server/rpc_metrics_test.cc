// RpcMetrics: one series per method, class and code actually seen, with the
// labels Prometheus users expect.

#include "server/rpc_metrics.h"

#include <prometheus/registry.h>

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace verity::server {
namespace {

std::map<std::string, std::string> LabelsOf(const prometheus::ClientMetric& m) {
  std::map<std::string, std::string> labels;
  for (const auto& label : m.label) labels[label.name] = label.value;
  return labels;
}

TEST(RpcMetricsTest, MakesOneSeriesPerCombinationSeen) {
  prometheus::Registry registry;
  RpcMetrics metrics(registry);
  metrics.Observe(RpcMethod::kRead, PriorityClass::kRt, absl::StatusCode::kOk,
                  absl::Microseconds(100));
  metrics.Observe(RpcMethod::kRead, PriorityClass::kRt, absl::StatusCode::kOk,
                  absl::Microseconds(300));
  metrics.Observe(RpcMethod::kStat, PriorityClass::kNone,
                  absl::StatusCode::kNotFound, absl::Microseconds(50));
  std::vector<prometheus::MetricFamily> families = registry.Collect();
  ASSERT_EQ(families.size(), 1);
  EXPECT_EQ(families[0].name, "verityd_rpc_duration_seconds");
  ASSERT_EQ(families[0].metric.size(), 2);
  for (const prometheus::ClientMetric& m : families[0].metric) {
    const auto labels = LabelsOf(m);
    if (labels.at("method") == "Read") {
      EXPECT_EQ(labels.at("priority_class"), "rt");
      EXPECT_EQ(labels.at("code"), "OK");
      EXPECT_EQ(m.histogram.sample_count, 2);
      EXPECT_NEAR(m.histogram.sample_sum, 400e-6, 1e-9);
    } else {
      EXPECT_EQ(labels.at("method"), "Stat");
      EXPECT_EQ(labels.at("priority_class"), "none");
      EXPECT_EQ(labels.at("code"), "NOT_FOUND");
    }
  }
  const std::vector<std::string> lines = metrics.Summary();
  ASSERT_EQ(lines.size(), 2);
  EXPECT_EQ(lines[0].rfind("stats rpc method=Read class=rt code=OK count=2 ", 0),
            0)
      << lines[0];
}

TEST(RpcLatencyBucketsTest, From25MicrosecondsPastTenSeconds) {
  const auto bounds = RpcLatencyBuckets();
  EXPECT_DOUBLE_EQ(bounds.front(), 25e-6);
  EXPECT_GT(bounds.back(), 10.0);
}

}  // namespace
}  // namespace verity::server
