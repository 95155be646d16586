// The loop's waits, as the durations it asks for (the fake clock): the
// interval after a success, a growing backoff after failures that starts
// over after a success, an attempt at once on SIGHUP, and the end on stop;
// and the signals WaitForSignal turns into wakes.

#include "client/sync/sync_loop.h"

#include <signal.h>

#include <deque>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace verity::sync {
namespace {

constexpr absl::Duration kInterval = absl::Seconds(30);

// Attempts that succeed or fail as scripted, and waits that end as
// scripted; records the waits asked for.
struct Script {
  std::deque<bool> attempts;  // true: OK
  std::deque<Wake> wakes;     // then kStop
  std::vector<absl::Duration> waits;
  int attempted = 0;

  void Run() {
    absl::BitGen gen;
    RunSyncLoop(
        [this]() -> absl::Status {
          ++attempted;
          const bool ok = attempts.empty() || attempts.front();
          if (!attempts.empty()) attempts.pop_front();
          return ok ? absl::OkStatus() : absl::UnavailableError("down");
        },
        kInterval,
        [this](absl::Duration timeout) {
          waits.push_back(timeout);
          if (wakes.empty()) return Wake::kStop;
          const Wake wake = wakes.front();
          wakes.pop_front();
          return wake;
        },
        gen);
  }
};

void ExpectNear(absl::Duration wait, absl::Duration base) {
  EXPECT_GE(wait, base * 0.8) << wait;
  EXPECT_LE(wait, base * 1.2) << wait;
}

TEST(SyncLoopTest, WaitsTheIntervalAfterASuccessAndStopsWhenTold) {
  Script script;
  script.wakes = {Wake::kTimeout, Wake::kTimeout};
  script.Run();
  EXPECT_EQ(script.attempted, 3);
  EXPECT_EQ(script.waits, std::vector<absl::Duration>(3, kInterval));
}

TEST(SyncLoopTest, BacksOffAfterFailuresUpToTheIntervalAndStartsOver) {
  Script script;
  script.attempts = {false, false, false, false, false,
                     false, false, true,  false};
  script.wakes = std::deque<Wake>(8, Wake::kTimeout);
  script.Run();
  ASSERT_EQ(script.waits.size(), 9u);
  const absl::Duration expected[] = {
      absl::Seconds(1),  absl::Seconds(2), absl::Seconds(4), absl::Seconds(8),
      absl::Seconds(16), kInterval,        kInterval};
  for (int i = 0; i < 7; ++i) ExpectNear(script.waits[i], expected[i]);
  EXPECT_EQ(script.waits[7], kInterval);          // after the success
  ExpectNear(script.waits[8], absl::Seconds(1));  // started over
}

TEST(SyncLoopTest, SyncNowAttemptsAtOnce) {
  Script script;
  script.wakes = {Wake::kSyncNow, Wake::kSyncNow};
  script.Run();
  EXPECT_EQ(script.attempted, 3);
}

TEST(SyncLoopTest, AnIntervalShorterThanASecondBoundsTheBackoff) {
  Script script;
  script.attempts = {false, false};
  script.wakes = {Wake::kTimeout};
  absl::BitGen gen;
  RunSyncLoop([] { return absl::UnavailableError("down"); },
              absl::Milliseconds(200),
              [&script](absl::Duration timeout) {
                script.waits.push_back(timeout);
                return script.waits.size() < 3 ? Wake::kTimeout : Wake::kStop;
              },
              gen);
  for (const absl::Duration wait : script.waits) {
    EXPECT_LE(wait, absl::Milliseconds(200));
  }
}

class WaitForSignalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sigemptyset(&signals_);
    for (int signal : {SIGHUP, SIGTERM, SIGINT}) sigaddset(&signals_, signal);
    ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &signals_, &old_), 0);
  }
  void TearDown() override { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

  sigset_t signals_;
  sigset_t old_;
};

TEST_F(WaitForSignalTest, HupSyncsNowTermAndIntStopAndTimeIsTimeout) {
  ASSERT_EQ(pthread_kill(pthread_self(), SIGHUP), 0);
  EXPECT_EQ(WaitForSignal(signals_, absl::Seconds(10)), Wake::kSyncNow);
  ASSERT_EQ(pthread_kill(pthread_self(), SIGTERM), 0);
  EXPECT_EQ(WaitForSignal(signals_, absl::Seconds(10)), Wake::kStop);
  ASSERT_EQ(pthread_kill(pthread_self(), SIGINT), 0);
  EXPECT_EQ(WaitForSignal(signals_, absl::Seconds(10)), Wake::kStop);
  const absl::Time start = absl::Now();
  EXPECT_EQ(WaitForSignal(signals_, absl::Milliseconds(50)), Wake::kTimeout);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(50));
}

}  // namespace
}  // namespace verity::sync
