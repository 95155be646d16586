// The retry rules of the SDK: which failures are worth another attempt, and
// how long to wait before it (exponential backoff with jitter).

#ifndef VERITYD_CLIENT_SDK_BACKOFF_H_
#define VERITYD_CLIENT_SDK_BACKOFF_H_

#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "verity/options.h"

namespace verity::client {

// INVALID_ARGUMENT naming the field that makes `policy` unusable.
absl::Status ValidateRetryPolicy(const sdk::RetryPolicy& policy);

// True for the codes an RPC gets when the transport, not the content, failed:
// another attempt (perhaps on another replica) may succeed.
bool IsRetryable(absl::StatusCode code);

// The delays between attempts: initial_backoff, then `multiplier` times the
// previous delay up to max_backoff, each jittered. Thread-compatible; the
// generator must outlive it.
class Backoff {
 public:
  Backoff(const sdk::RetryPolicy& policy, absl::BitGenRef gen)
      : policy_(policy), gen_(gen), base_(policy.initial_backoff) {}

  // The delay before the next attempt.
  absl::Duration Next();

  // Starts over from initial_backoff, after an attempt made progress.
  void Reset() { base_ = policy_.initial_backoff; }

 private:
  const sdk::RetryPolicy policy_;
  absl::BitGenRef gen_;
  absl::Duration base_;  // the next delay before jitter
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_BACKOFF_H_
