// ProgressSink forwards everything to the sink it wraps, and draws a
// progress line only for large transfers, erasing it at the end.

#include "client/cli/progress_sink.h"

#include <string>

#include "client/testing/test_argv.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"

namespace verity::cli {
namespace {

TEST(ProgressSinkTest, SmallTransfersDrawNothing) {
  CapturedFile err;
  sdk::MemorySink inner;
  ProgressSink sink(inner, err.get());
  EXPECT_TRUE(sink.SupportsRandomAccess());
  ASSERT_TRUE(sink.Start(3).ok());
  ASSERT_TRUE(sink.Write(0, AsBytes("abc")).ok());
  ASSERT_TRUE(sink.Finish().ok());
  EXPECT_EQ(inner.data(), "abc");
  EXPECT_EQ(err.contents(), "");
}

TEST(ProgressSinkTest, LargeTransfersDrawAndErase) {
  CapturedFile err;
  std::string got;
  sdk::CallbackSink inner([&got](absl::Span<const uint8_t> data) {
    got.append(data.begin(), data.end());
    return absl::OkStatus();
  });
  ProgressSink sink(inner, err.get());
  EXPECT_FALSE(sink.SupportsRandomAccess());
  const std::string chunk(1 << 20, 'x');
  ASSERT_TRUE(sink.Start(kMinProgressBytes).ok());
  for (uint64_t at = 0; at < kMinProgressBytes; at += chunk.size()) {
    ASSERT_TRUE(sink.Write(at, AsBytes(chunk)).ok());
  }
  const std::string drawn = err.contents();
  EXPECT_NE(drawn.find("/ 8.0 MiB"), std::string::npos) << drawn;
  sink.Abort();
  EXPECT_EQ(got.size(), kMinProgressBytes);
  const std::string erased = err.contents().substr(drawn.size());
  EXPECT_EQ(erased.find_first_not_of(" \r"), std::string::npos);
  EXPECT_FALSE(erased.empty());
}

}  // namespace
}  // namespace verity::cli
