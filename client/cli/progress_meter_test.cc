// The progress line: its format, at most five redraws a second whatever the
// number of updates, and nothing left on the terminal at the end.

#include "client/cli/progress_meter.h"

#include <algorithm>
#include <string>

#include "client/testing/test_argv.h"
#include "gtest/gtest.h"

namespace verity::cli {
namespace {

TEST(FormatProgressTest, BytesRateAndEta) {
  EXPECT_EQ(FormatProgress(0, 100 << 20, absl::ZeroDuration()),
            "  0 B / 100.0 MiB  0%");
  EXPECT_EQ(FormatProgress(25 << 20, 100 << 20, absl::Seconds(5)),
            "  25.0 MiB / 100.0 MiB  25%  5.0 MiB/s  ETA 0:15");
  EXPECT_EQ(
      FormatProgress(uint64_t{1} << 30, uint64_t{3000} << 30, absl::Seconds(1)),
      "  1.0 GiB / 2.9 TiB  0%  1.0 GiB/s  ETA 49:59");
  EXPECT_EQ(FormatProgress(1, 7201, absl::Seconds(1)),
            "  1 B / 7.0 KiB  0%  1 B/s  ETA 2:00:00");
  EXPECT_EQ(FormatProgress(512, 1000, absl::Milliseconds(100)),
            "  512 B / 1000 B  51%");
}

TEST(ProgressMeterTest, RedrawsAtMostFiveTimesASecondAndErases) {
  CapturedFile out;
  absl::Time now = absl::FromUnixSeconds(1000);
  ProgressMeter meter(out.get(), 1000, [&now] { return now; });
  for (int i = 0; i < 100; ++i) {
    meter.Add(10);
    now += absl::Milliseconds(10);  // one second in all
  }
  const std::string drawn = out.contents();
  const size_t redraws = std::count(drawn.begin(), drawn.end(), '\r');
  EXPECT_EQ(redraws, 5u);  // at 0, 200, 400, 600 and 800 ms
  EXPECT_NE(drawn.find("\r  810 B / 1000 B  81%  1012 B/s  ETA 0:00"),
            std::string::npos)
      << drawn;
  meter.Finish();
  const std::string erased = out.contents().substr(drawn.size());
  EXPECT_EQ(erased.front(), '\r');
  EXPECT_EQ(erased.back(), '\r');
  EXPECT_EQ(erased.find_first_not_of(" \r"), std::string::npos);
  meter.Add(10);
  meter.Finish();
  EXPECT_EQ(out.contents().size(), drawn.size() + erased.size());
}

TEST(ProgressMeterTest, NothingDrawnNothingErased) {
  CapturedFile out;
  ProgressMeter meter(out.get(), 10);
  meter.Finish();
  EXPECT_EQ(out.contents(), "");
}

}  // namespace
}  // namespace verity::cli
