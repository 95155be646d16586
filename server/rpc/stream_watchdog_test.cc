// StreamWatchdog: who is cancelled and when, and that Close() and a cancel in
// progress never overlap, whichever thread closes.

#include "server/rpc/stream_watchdog.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace verity::server {
namespace {

constexpr absl::Duration kTimeout = absl::Milliseconds(40);

TEST(StreamWatchdogTest, AStreamWaitingTooLongIsCancelledOnce) {
  StreamWatchdog watchdog(kTimeout);
  std::atomic<int> cancels{0};
  StreamWatchdog::Stream stream(&watchdog, [&cancels] { ++cancels; });
  const absl::Time start = absl::Now();
  stream.StartWaiting();
  while (cancels.load() == 0 && absl::Now() - start < absl::Seconds(5)) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  EXPECT_GE(absl::Now() - start, kTimeout);
  EXPECT_TRUE(stream.expired());
  absl::SleepFor(4 * kTimeout);
  EXPECT_EQ(cancels.load(), 1);
  EXPECT_EQ(watchdog.IdleError().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(StreamWatchdogTest, StreamsThatDoNotWaitOrCatchUpAreLeftAlone) {
  StreamWatchdog watchdog(kTimeout);
  std::atomic<int> cancels{0};
  StreamWatchdog::Stream idle_server(&watchdog, [&cancels] { ++cancels; });
  StreamWatchdog::Stream steady(&watchdog, [&cancels] { ++cancels; });
  // A client that takes every message within the timeout, for 8 timeouts.
  for (int i = 0; i < 16; ++i) {
    steady.StartWaiting();
    absl::SleepFor(kTimeout / 2);
    steady.StopWaiting();
  }
  EXPECT_EQ(cancels.load(), 0);
  EXPECT_FALSE(steady.expired());
  EXPECT_FALSE(idle_server.expired());
}

TEST(StreamWatchdogTest, AZeroTimeoutWatchesNothing) {
  StreamWatchdog watchdog(absl::ZeroDuration());
  bool cancelled = false;
  StreamWatchdog::Stream stream(&watchdog, [&cancelled] { cancelled = true; });
  stream.StartWaiting();
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(cancelled);
  StreamWatchdog::Stream unwatched(nullptr, [] {});
  unwatched.StartWaiting();
}

// gRPC may run a call's reactions, OnDone included, inside TryCancel().
TEST(StreamWatchdogTest, CloseFromInsideTheCancel) {
  StreamWatchdog watchdog(kTimeout);
  absl::Notification closed;
  StreamWatchdog::Stream* self = nullptr;
  StreamWatchdog::Stream watched(&watchdog, [&] {
    self->Close();
    closed.Notify();
  });
  self = &watched;
  watched.StartWaiting();
  EXPECT_TRUE(closed.WaitForNotificationWithTimeout(absl::Seconds(5)));
}

TEST(StreamWatchdogTest, CloseElsewhereWaitsForTheCancelInProgress) {
  StreamWatchdog watchdog(kTimeout);
  absl::Notification started;
  std::atomic<bool> finished{false};
  StreamWatchdog::Stream stream(&watchdog, [&] {
    started.Notify();
    absl::SleepFor(absl::Milliseconds(100));
    finished.store(true);
  });
  stream.StartWaiting();
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(5)));
  stream.Close();
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace verity::server
