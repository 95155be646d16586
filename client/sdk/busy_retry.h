// BusyRetry: how the calls of one transfer wait out a server that refuses
// some of them for its budget (RESOURCE_EXHAUSTED) while it serves the rest.

#ifndef VERITYD_CLIENT_SDK_BUSY_RETRY_H_
#define VERITYD_CLIENT_SDK_BUSY_RETRY_H_

#include <atomic>
#include <cstddef>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"

namespace verity::sdk {

struct BusyRetryLimits {
  // A refused call waits this long, doubling up to max_wait, before it is
  // sent again.
  absl::Duration first_wait = absl::Milliseconds(50);
  absl::Duration max_wait = absl::Seconds(1);
  // ... for as long as the transfer progresses at least this often.
  absl::Duration without_progress = absl::Seconds(30);
};

// Thread-safe; one per transfer, shared by its calls.
class BusyRetry {
 public:
  // `progress` counts what the transfer has done (files fetched); it must
  // outlive this.
  explicit BusyRetry(const std::atomic<size_t>& progress,
                     BusyRetryLimits limits = {})
      : progress_(progress), limits_(limits) {}

  // Runs `call` (which returns its status) until it is not
  // RESOURCE_EXHAUSTED: a refusal is tried again while the transfer's other
  // calls are under way or it progressed since the call began (the server
  // is busy with this transfer, not gone), and while it progressed within
  // limits.without_progress. Returns the last call's status.
  absl::Status Call(absl::FunctionRef<absl::Status()> call);

 private:
  const std::atomic<size_t>& progress_;
  const BusyRetryLimits limits_;
  std::atomic<int> in_flight_{0};  // calls of Call under way
};

}  // namespace verity::sdk

#endif  // VERITYD_CLIENT_SDK_BUSY_RETRY_H_
