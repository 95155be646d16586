#include "client/sdk/busy_retry.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace verity::sdk {
namespace {

constexpr BusyRetryLimits kFast{absl::Milliseconds(1), absl::Milliseconds(10),
                                absl::Milliseconds(200)};

absl::Status Refused() { return absl::ResourceExhaustedError("busy"); }

// Another call of the same transfer, under way until released (or 5 s).
class CallUnderWay {
 public:
  explicit CallUnderWay(BusyRetry& retry)
      : thread_([this, &retry] {
          retry
              .Call([this] {
                started_.Notify();
                release_.WaitForNotificationWithTimeout(absl::Seconds(5));
                return absl::OkStatus();
              })
              .IgnoreError();
        }) {
    started_.WaitForNotification();
  }
  ~CallUnderWay() {
    release_.Notify();
    thread_.join();
  }

 private:
  absl::Notification started_;
  absl::Notification release_;
  std::thread thread_;
};

TEST(BusyRetryTest, ARefusalWithNothingElseUnderWayIsReturnedAtOnce) {
  const std::atomic<size_t> progress{0};
  BusyRetry retry(progress, kFast);
  int calls = 0;
  EXPECT_TRUE(absl::IsResourceExhausted(retry.Call([&] {
    ++calls;
    return Refused();
  })));
  EXPECT_EQ(calls, 1);
}

TEST(BusyRetryTest, OtherOutcomesAreReturnedAtOnce) {
  const std::atomic<size_t> progress{0};
  BusyRetry retry(progress, kFast);
  CallUnderWay other(retry);
  int calls = 0;
  EXPECT_TRUE(absl::IsUnavailable(retry.Call([&] {
    ++calls;
    return absl::UnavailableError("gone");
  })));
  EXPECT_TRUE(retry
                  .Call([&] {
                    ++calls;
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(calls, 2);
}

TEST(BusyRetryTest, ARefusalIsSentAgainWhileAnotherCallIsUnderWay) {
  const std::atomic<size_t> progress{0};
  BusyRetry retry(progress, kFast);
  CallUnderWay other(retry);
  int calls = 0;
  EXPECT_TRUE(
      retry.Call([&] { return ++calls < 5 ? Refused() : absl::OkStatus(); })
          .ok());
  EXPECT_EQ(calls, 5);
}

// The give-up: another call stays under way, nothing progresses, and the
// refused call stops after the limit rather than waiting for it.
TEST(BusyRetryTest, GivesUpAfterTheLimitWithoutProgress) {
  const std::atomic<size_t> progress{0};
  BusyRetry retry(progress, kFast);
  CallUnderWay other(retry);
  int calls = 0;
  const absl::Time start = absl::Now();
  EXPECT_TRUE(absl::IsResourceExhausted(retry.Call([&] {
    ++calls;
    return Refused();
  })));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, kFast.without_progress);
  EXPECT_LT(took, absl::Seconds(3));  // not when the other call ends, at 5 s
  EXPECT_GT(calls, 2);
}

// Progress restarts the limit: refused for 600 ms while files arrive, the
// call is still sent again after three times the limit.
TEST(BusyRetryTest, ProgressKeepsARefusedCallGoing) {
  std::atomic<size_t> progress{0};
  BusyRetry retry(progress, kFast);
  CallUnderWay other(retry);
  std::atomic<bool> stop{false};
  std::thread files([&] {
    while (!stop) {
      progress++;
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  const absl::Time start = absl::Now();
  const absl::Status status = retry.Call([&] {
    return absl::Now() - start < absl::Milliseconds(600) ? Refused()
                                                         : absl::OkStatus();
  });
  stop = true;
  files.join();
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace verity::sdk
