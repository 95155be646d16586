// Backoff grows geometrically up to its cap, jitters within bounds, and
// restarts after progress; only transport failures are retryable.

#include "client/sdk/backoff.h"

#include <random>

#include "gtest/gtest.h"

namespace verity::client {
namespace {

using ::absl::StatusCode;

sdk::RetryPolicy Policy(double jitter) {
  sdk::RetryPolicy policy;
  policy.initial_backoff = absl::Milliseconds(100);
  policy.max_backoff = absl::Seconds(1);
  policy.multiplier = 3;
  policy.jitter = jitter;
  return policy;
}

TEST(BackoffTest, GrowsToTheCapAndResets) {
  std::mt19937 gen(1);
  Backoff backoff(Policy(0), gen);
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(100));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(300));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(900));
  EXPECT_EQ(backoff.Next(), absl::Seconds(1));
  EXPECT_EQ(backoff.Next(), absl::Seconds(1));
  backoff.Reset();
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(100));
}

TEST(BackoffTest, JitterStaysWithinBoundsAndVaries) {
  std::mt19937 gen(7);
  absl::Duration low = absl::InfiniteDuration(), high = absl::ZeroDuration();
  for (int i = 0; i < 1000; ++i) {
    Backoff backoff(Policy(0.5), gen);
    const absl::Duration delay = backoff.Next();
    low = std::min(low, delay);
    high = std::max(high, delay);
  }
  EXPECT_GE(low, absl::Milliseconds(50));
  EXPECT_LE(high, absl::Milliseconds(150));
  EXPECT_LT(low, absl::Milliseconds(60));
  EXPECT_GT(high, absl::Milliseconds(140));
}

TEST(BackoffTest, ValidatesThePolicy) {
  EXPECT_TRUE(ValidateRetryPolicy(sdk::RetryPolicy()).ok());
  sdk::RetryPolicy policy;
  policy.max_attempts = 0;
  EXPECT_FALSE(ValidateRetryPolicy(policy).ok());
  policy = sdk::RetryPolicy();
  policy.max_backoff = absl::Milliseconds(1);
  EXPECT_FALSE(ValidateRetryPolicy(policy).ok());
  policy = sdk::RetryPolicy();
  policy.multiplier = 0.5;
  EXPECT_FALSE(ValidateRetryPolicy(policy).ok());
  policy = sdk::RetryPolicy();
  policy.jitter = 1.5;
  EXPECT_FALSE(ValidateRetryPolicy(policy).ok());
}

TEST(BackoffTest, OnlyTransportFailuresAreRetryable) {
  for (StatusCode code :
       {StatusCode::kUnavailable, StatusCode::kDeadlineExceeded,
        StatusCode::kAborted, StatusCode::kResourceExhausted,
        StatusCode::kInternal, StatusCode::kCancelled}) {
    EXPECT_TRUE(IsRetryable(code)) << code;
  }
  for (StatusCode code :
       {StatusCode::kOk, StatusCode::kDataLoss, StatusCode::kNotFound,
        StatusCode::kInvalidArgument, StatusCode::kOutOfRange,
        StatusCode::kPermissionDenied, StatusCode::kUnauthenticated,
        StatusCode::kFailedPrecondition, StatusCode::kUnknown}) {
    EXPECT_FALSE(IsRetryable(code)) << code;
  }
}

}  // namespace
}  // namespace verity::client
