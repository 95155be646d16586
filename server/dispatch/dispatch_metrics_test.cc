// DispatchMetrics: counts by path, class and reason; quantiles estimated from
// buckets the way Prometheus does; the summary lines benchmarks parse.

#include "server/dispatch/dispatch_metrics.h"

#include <prometheus/registry.h>

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(DispatchMetricsTest, CountsOnlyWhatHappened) {
  prometheus::Registry registry;
  DispatchMetrics metrics(registry);
  metrics.CountPlacement(DispatchPath::kInline, PriorityClass::kRt,
                         DispatchReason::kWithinLimit);
  metrics.CountPlacement(DispatchPath::kPool, PriorityClass::kIdle,
                         DispatchReason::kSize);
  metrics.CountPlacement(DispatchPath::kPool, PriorityClass::kIdle,
                         DispatchReason::kSize);
  metrics.ObserveQueueWait(PriorityClass::kIdle, absl::Microseconds(10));
  metrics.ObserveVerify(DispatchPath::kPool, absl::Microseconds(100));
  EXPECT_EQ(metrics.placements(DispatchPath::kInline, PriorityClass::kRt,
                               DispatchReason::kWithinLimit),
            1);
  EXPECT_EQ(metrics.placements(DispatchPath::kPool, PriorityClass::kIdle,
                               DispatchReason::kSize),
            2);
  EXPECT_EQ(metrics.placements(DispatchPath::kInline, PriorityClass::kRt,
                               DispatchReason::kSize),
            0);
  EXPECT_EQ(metrics.queue_wait_count(PriorityClass::kIdle), 1);
  EXPECT_EQ(metrics.verify_count(DispatchPath::kPool), 1);
  const std::vector<std::string> lines = metrics.Summary();
  ASSERT_EQ(lines.size(), 4);
  EXPECT_EQ(lines[0],
            "stats dispatch path=inline class=rt reason=within_limit count=1");
  EXPECT_EQ(lines[1],
            "stats dispatch path=pool class=idle reason=size count=2");
  EXPECT_EQ(lines[2].rfind("stats verify path=pool count=1 p50_us=", 0), 0);
  EXPECT_EQ(lines[3].rfind("stats queue_wait class=idle count=1 p50_us=", 0),
            0);
}

TEST(DispatchMetricsTest, ImpossibleCombinationsAreNotExported) {
  prometheus::Registry registry;
  DispatchMetrics metrics(registry);
  size_t series = 0;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name == "verityd_dispatch_total") series = family.metric.size();
  }
  // inline: within_limit, forced; pool: forced, size, cache_miss, budget.
  EXPECT_EQ(series, 4 * (2 + 4));
}

TEST(FineLatencyBucketsTest, SpanOneMicrosecondToASecond) {
  const auto bounds = FineLatencyBuckets();
  EXPECT_DOUBLE_EQ(bounds.front(), 1e-6);
  EXPECT_GT(bounds.back(), 1.0);
  for (size_t i = 1; i < bounds.size(); ++i)
    EXPECT_GT(bounds[i], bounds[i - 1]);
}

}  // namespace
}  // namespace verity::server
