// Reassembler delivers parts in order whatever order they are written in,
// bounds what it buffers by making writers wait, and fails every writer once
// delivery fails or the fetch is aborted.

#include "client/sdk/reassembler.h"

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"

namespace verity::client {
namespace {

// Collects deliveries; only the reassembler calls it, one call at a time.
struct Collector {
  std::string out;
  Reassembler::Deliver deliver() {
    return [this](absl::Span<const uint8_t> data) {
      out.append(data.begin(), data.end());
      return absl::OkStatus();
    };
  }
};

std::string Letters(size_t size, char first) {
  std::string s(size, first);
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>(first + i % 7);
  return s;
}

TEST(ReassemblerTest, ConcurrentPartsComeOutInOrder) {
  constexpr int kParts = 5;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<std::string> parts;
    for (int i = 0; i < kParts; ++i) {
      parts.push_back(Letters(1000 + 37 * i, static_cast<char>('a' + 5 * i)));
    }
    Collector collector;
    Reassembler reassembler(kParts, 300, collector.deliver());
    std::vector<std::thread> threads;
    for (int i = 0; i < kParts; ++i) {
      threads.emplace_back([&, i] {
        std::mt19937 rng(seed * 100 + i);
        absl::string_view rest = parts[i];
        while (!rest.empty()) {
          const size_t n = std::min<size_t>(rest.size(), 1 + rng() % 200);
          ASSERT_TRUE(reassembler.Write(i, AsBytes(rest.substr(0, n))).ok());
          rest.remove_prefix(n);
          if (rng() % 4 == 0) absl::SleepFor(absl::Microseconds(rng() % 300));
        }
        ASSERT_TRUE(reassembler.FinishPart(i).ok());
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_TRUE(reassembler.Done().ok());
    std::string expected;
    for (const std::string& part : parts) expected += part;
    ASSERT_EQ(collector.out, expected) << "seed " << seed;
    // At most the bound (plus one write of up to 200 bytes) per queued part.
    EXPECT_LE(reassembler.peak_buffered_bytes(), (kParts - 1) * (300 + 200));
  }
}

TEST(ReassemblerTest, AFullQueueMakesItsWriterWait) {
  Collector collector;
  Reassembler reassembler(2, 100, collector.deliver());
  ASSERT_TRUE(reassembler.Write(1, AsBytes(std::string(60, 'y'))).ok());
  absl::Notification returned;
  std::thread writer([&] {
    EXPECT_TRUE(reassembler.Write(1, AsBytes(std::string(60, 'z'))).ok());
    returned.Notify();
  });
  EXPECT_FALSE(returned.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  EXPECT_EQ(reassembler.peak_buffered_bytes(), 60u);
  // Part 0 delivers directly; finishing it lets part 1's queue drain.
  ASSERT_TRUE(reassembler.Write(0, AsBytes("x")).ok());
  EXPECT_FALSE(returned.WaitForNotificationWithTimeout(absl::Milliseconds(20)));
  ASSERT_TRUE(reassembler.FinishPart(0).ok());
  returned.WaitForNotification();
  writer.join();
  ASSERT_TRUE(reassembler.FinishPart(1).ok());
  EXPECT_TRUE(reassembler.Done().ok());
  EXPECT_EQ(collector.out, "x" + std::string(60, 'y') + std::string(60, 'z'));
}

TEST(ReassemblerTest, ADeliveryErrorFailsEveryWriter) {
  int calls = 0;
  Reassembler reassembler(3, 10, [&calls](absl::Span<const uint8_t>) {
    ++calls;
    return absl::ResourceExhaustedError("disk full");
  });
  ASSERT_TRUE(reassembler.Write(2, AsBytes("0123456789")).ok());
  absl::Status blocked;
  std::thread writer([&] { blocked = reassembler.Write(2, AsBytes("more")); });
  EXPECT_EQ(reassembler.Write(0, AsBytes("a")).code(),
            absl::StatusCode::kResourceExhausted);
  writer.join();
  EXPECT_EQ(blocked.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(reassembler.Write(1, AsBytes("b")).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(reassembler.Done().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(calls, 1);
}

TEST(ReassemblerTest, AbortWakesWaitingWriters) {
  Collector collector;
  Reassembler reassembler(2, 4, collector.deliver());
  ASSERT_TRUE(reassembler.Write(1, AsBytes("abcd")).ok());
  absl::Status blocked;
  std::thread writer([&] { blocked = reassembler.Write(1, AsBytes("e")); });
  absl::SleepFor(absl::Milliseconds(10));
  reassembler.Abort(absl::DataLossError("part 0 failed verification"));
  writer.join();
  EXPECT_EQ(blocked.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(collector.out, "");  // part 1 never went out before part 0
}

TEST(ReassemblerTest, DoneNeedsEveryPart) {
  Collector collector;
  Reassembler reassembler(2, 100, collector.deliver());
  ASSERT_TRUE(reassembler.FinishPart(0).ok());
  EXPECT_EQ(reassembler.Done().code(), absl::StatusCode::kInternal);
  ASSERT_TRUE(reassembler.FinishPart(1).ok());
  EXPECT_TRUE(reassembler.Done().ok());
}

}  // namespace
}  // namespace verity::client
