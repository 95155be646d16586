// The service's state as the server changes it and every call reads it:
// whether it serves, whether its store answers, and the streams under way.

#ifndef VERITYD_SERVER_RPC_SERVICE_STATE_H_
#define VERITYD_SERVER_RPC_SERVICE_STATE_H_

#include <atomic>

#include "absl/status/status.h"

namespace verity::server {

// Thread-safe: atomics, which the server sets and calls read.
struct ServiceState {
  // False until start-up (the import) is done, and again from the start of a
  // shutdown (`stopping`): new calls then get UNAVAILABLE.
  std::atomic<bool> serving{false};
  std::atomic<bool> stopping{false};
  // False while the store's health probe fails (a remote store unreachable):
  // health reports NOT_SERVING then; calls are still tried.
  std::atomic<bool> store_up{true};
  // Read and Put streams and ReadSmall calls under way, and Put streams
  // among them (StreamSlot counts them).
  std::atomic<int> active_streams{0};
  std::atomic<int> active_puts{0};

  // UNAVAILABLE while not serving.
  absl::Status CheckServing() const {
    if (serving.load(std::memory_order_acquire)) return absl::OkStatus();
    return absl::UnavailableError(stopping.load(std::memory_order_acquire)
                                      ? "verityd is shutting down"
                                      : "verityd is starting up (importing)");
  }
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_SERVICE_STATE_H_
