#include "client/sync/sync_loop.h"

#include <algorithm>
#include <cerrno>

#include "absl/time/clock.h"
#include "client/sdk/backoff.h"

namespace verity::sync {

sdk::RetryPolicy FailureBackoff(absl::Duration interval) {
  sdk::RetryPolicy policy;
  policy.initial_backoff = std::min(absl::Seconds(1), interval);
  policy.max_backoff = interval;
  return policy;
}

void RunSyncLoop(absl::FunctionRef<absl::Status()> attempt,
                 absl::Duration interval,
                 absl::FunctionRef<Wake(absl::Duration timeout)> wait,
                 absl::BitGenRef gen) {
  client::Backoff backoff(FailureBackoff(interval), gen);
  while (true) {
    absl::Duration next = interval;
    if (attempt().ok()) {
      backoff.Reset();
    } else {
      next = std::min(next, backoff.Next());
    }
    if (wait(next) == Wake::kStop) return;
  }
}

Wake WaitForSignal(const sigset_t& signals, absl::Duration timeout) {
  const absl::Time until = absl::Now() + timeout;
  while (true) {
    const timespec left =
        absl::ToTimespec(std::max(until - absl::Now(), absl::ZeroDuration()));
    const int signal = sigtimedwait(&signals, nullptr, &left);
    if (signal == SIGHUP) return Wake::kSyncNow;
    if (signal == SIGTERM || signal == SIGINT) return Wake::kStop;
    if (signal < 0 && errno == EAGAIN) return Wake::kTimeout;
  }
}

}  // namespace verity::sync
