#include "client/sdk/busy_retry.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace verity::sdk {

absl::Status BusyRetry::Call(absl::FunctionRef<absl::Status()> call) {
  absl::Duration wait = limits_.first_wait;
  size_t progress = progress_;
  absl::Time progress_at = absl::Now();
  while (true) {
    const size_t seen = progress_;
    in_flight_++;
    const absl::Status status = call();
    in_flight_--;
    if (!absl::IsResourceExhausted(status)) return status;
    if (progress_ != progress) {
      progress = progress_;
      progress_at = absl::Now();
    }
    if ((in_flight_ == 0 && progress_ == seen) ||
        absl::Now() - progress_at > limits_.without_progress) {
      return status;
    }
    absl::SleepFor(wait);
    wait = std::min(2 * wait, limits_.max_wait);
  }
}

}  // namespace verity::sdk
