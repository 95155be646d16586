// HistogramQuantile() against hand-computed interpolations.

#include "server/metrics/histogram_quantile.h"

#include <cmath>

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(HistogramQuantileTest, InterpolatesWithinTheBucket) {
  prometheus::ClientMetric::Histogram h;
  h.sample_count = 100;
  h.bucket = {{0, 1.0}, {50, 2.0}, {100, 4.0}, {100, INFINITY}};
  EXPECT_DOUBLE_EQ(HistogramQuantile(h, 0.25), 1.5);
  EXPECT_DOUBLE_EQ(HistogramQuantile(h, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(HistogramQuantile(h, 0.75), 3.0);
  EXPECT_DOUBLE_EQ(HistogramQuantile(h, 1.0), 4.0);
  h.bucket = {{10, 1.0}, {90, INFINITY}};
  h.sample_count = 90;
  EXPECT_DOUBLE_EQ(HistogramQuantile(h, 0.99), 1.0);
  EXPECT_DOUBLE_EQ(
      HistogramQuantile(prometheus::ClientMetric::Histogram(), 0.5), 0.0);
}

}  // namespace
}  // namespace verity::server
