// Implements RetryUnary.

#include "client/sdk/rpc_retry.h"

#include <algorithm>

#include "absl/random/random.h"
#include "client/sdk/backoff.h"

namespace verity::client {

absl::Status RetryUnary(
    const sdk::RetryPolicy& policy, absl::Duration rpc_timeout,
    absl::Time deadline,
    absl::FunctionRef<absl::Status(grpc::ClientContext*)> call) {
  absl::BitGen gen;
  Backoff backoff(policy, gen);
  for (int attempt = 1;; ++attempt) {
    grpc::ClientContext context;
    absl::Time attempt_deadline = deadline;
    if (rpc_timeout > absl::ZeroDuration()) {
      attempt_deadline = std::min(deadline, absl::Now() + rpc_timeout);
    }
    if (attempt_deadline != absl::InfiniteFuture()) {
      context.set_deadline(absl::ToChronoTime(attempt_deadline));
    }
    const absl::Status status = call(&context);
    if (status.ok() || !IsRetryable(status.code()) ||
        attempt >= policy.max_attempts) {
      return status;
    }
    const absl::Duration delay = backoff.Next();
    if (absl::Now() + delay >= deadline) return status;
    absl::SleepFor(delay);
  }
}

}  // namespace verity::client
