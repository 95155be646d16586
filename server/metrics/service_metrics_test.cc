// ServiceMetrics: one series per method, class and code actually seen, with the
// labels Prometheus users expect.

#include "server/metrics/service_metrics.h"

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

prometheus::MetricFamily FamilyNamed(prometheus::Registry& registry,
                                     const std::string& name) {
  for (prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name == name) return family;
  }
  ADD_FAILURE() << "no " << name;
  return {};
}

// The value of the series of `family` whose label `label` is `value`.
double ValueWhere(const prometheus::MetricFamily& family,
                  const std::string& label, const std::string& value) {
  for (const prometheus::ClientMetric& m : family.metric) {
    auto labels = LabelsOf(m);
    if (label.empty() || labels[label] == value) return m.counter.value;
  }
  ADD_FAILURE() << family.name << " has no " << label << "=" << value;
  return -1;
}

TEST(ServiceMetricsTest, CountsBytesAndCorruptionByLabel) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  metrics.AddReadBytes(PriorityClass::kIdle, 4096);
  metrics.AddReadBytes(PriorityClass::kIdle, 100);
  metrics.AddReadBytes(PriorityClass::kRt, 7);
  metrics.AddPutBytes(12345);
  metrics.CountCorruption(CorruptionKind::kTree);
  const auto read = FamilyNamed(registry, "verityd_read_bytes_total");
  EXPECT_EQ(read.metric.size(), 4);
  EXPECT_EQ(ValueWhere(read, "priority_class", "idle"), 4196);
  EXPECT_EQ(ValueWhere(read, "priority_class", "rt"), 7);
  EXPECT_EQ(ValueWhere(read, "priority_class", "be"), 0);
  EXPECT_EQ(
      ValueWhere(FamilyNamed(registry, "verityd_put_bytes_total"), "", ""),
      12345);
  const auto corruption =
      FamilyNamed(registry, "verityd_corruption_detected_total");
  EXPECT_EQ(ValueWhere(corruption, "kind", "tree"), 1);
  EXPECT_EQ(ValueWhere(corruption, "kind", "data"), 0);
}

TEST(ServiceMetricsTest, SuccessesExistFromTheStartFailuresWhenSeen) {
  prometheus::Registry registry;
  ServiceMetrics metrics(registry);
  // Read, ReadSmall and BatchRead OK per class, and OK for each other method.
  constexpr size_t kSeries = 3 * 4 + (kNumRpcMethods - 3);
  EXPECT_EQ(FamilyNamed(registry, "verityd_rpc_duration_seconds").metric.size(),
            kSeries);
  metrics.Observe(RpcMethod::kRead, PriorityClass::kRt, absl::StatusCode::kOk,
                  absl::Microseconds(100));
  metrics.Observe(RpcMethod::kRead, PriorityClass::kRt, absl::StatusCode::kOk,
                  absl::Microseconds(300));
  metrics.Observe(RpcMethod::kStat, PriorityClass::kNone,
                  absl::StatusCode::kNotFound, absl::Microseconds(50));
  const prometheus::MetricFamily family =
      FamilyNamed(registry, "verityd_rpc_duration_seconds");
  ASSERT_EQ(family.metric.size(), kSeries + 1);
  uint64_t observed = 0;
  for (const prometheus::ClientMetric& m : family.metric) {
    const auto labels = LabelsOf(m);
    observed += m.histogram.sample_count;
    if (labels.at("method") == "Read" && labels.at("priority_class") == "rt") {
      EXPECT_EQ(labels.at("code"), "OK");
      EXPECT_EQ(m.histogram.sample_count, 2);
      EXPECT_NEAR(m.histogram.sample_sum, 400e-6, 1e-9);
    }
    if (labels.at("code") == "NOT_FOUND") {
      EXPECT_EQ(labels.at("method"), "Stat");
      EXPECT_EQ(labels.at("priority_class"), "none");
      EXPECT_EQ(m.histogram.sample_count, 1);
    }
  }
  EXPECT_EQ(observed, 3);
  // The summary names only what happened.
  const std::vector<std::string> lines = metrics.Summary();
  ASSERT_EQ(lines.size(), 2);
  EXPECT_EQ(
      lines[0].rfind("stats rpc method=Read class=rt code=OK count=2 ", 0), 0)
      << lines[0];
  EXPECT_EQ(
      lines[1].rfind("stats rpc method=Stat class=none code=NOT_FOUND ", 0), 0)
      << lines[1];
}

TEST(RpcLatencyBucketsTest, From25MicrosecondsPastTenSeconds) {
  const auto bounds = RpcLatencyBuckets();
  EXPECT_DOUBLE_EQ(bounds.front(), 25e-6);
  EXPECT_GT(bounds.back(), 10.0);
}

}  // namespace
}  // namespace verity::server
