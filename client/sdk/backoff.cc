// Implements the retry rules.

#include "client/sdk/backoff.h"

#include <algorithm>

#include "absl/random/distributions.h"

namespace verity::client {

absl::Status ValidateRetryPolicy(const sdk::RetryPolicy& policy) {
  if (policy.max_attempts < 1) {
    return absl::InvalidArgumentError("retry.max_attempts must be at least 1");
  }
  if (policy.initial_backoff < absl::ZeroDuration() ||
      policy.max_backoff < policy.initial_backoff) {
    return absl::InvalidArgumentError(
        "retry backoffs must satisfy 0 <= initial_backoff <= max_backoff");
  }
  // Written so that NaN fails too.
  if (!(policy.multiplier >= 1.0) || !(policy.multiplier <= 1000.0)) {
    return absl::InvalidArgumentError(
        "retry.multiplier must be from 1 to 1000");
  }
  if (!(policy.jitter >= 0.0) || !(policy.jitter <= 1.0)) {
    return absl::InvalidArgumentError("retry.jitter must be from 0 to 1");
  }
  return absl::OkStatus();
}

bool IsRetryable(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kUnavailable:        // no connection, or it broke
    case absl::StatusCode::kDeadlineExceeded:   // this attempt's deadline
    case absl::StatusCode::kAborted:            // the server gave up
    case absl::StatusCode::kCancelled:          // the server cancelled
    case absl::StatusCode::kResourceExhausted:  // too many streams right now
    case absl::StatusCode::kInternal:           // how HTTP/2 resets surface
      return true;
    default:
      return false;
  }
}

absl::Duration Backoff::Next() {
  const absl::Duration base = base_;
  base_ = std::min(base_ * policy_.multiplier, policy_.max_backoff);
  if (policy_.jitter == 0) return base;
  return base * absl::Uniform(absl::IntervalClosed, gen_, 1.0 - policy_.jitter,
                              1.0 + policy_.jitter);
}

}  // namespace verity::client
