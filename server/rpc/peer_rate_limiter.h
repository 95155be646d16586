// Bounds the request rate of each client connection with a token bucket, so
// that one peer cannot flood the server with calls (each new stream or unary
// call is one request; the messages of a stream are not counted).

#ifndef VERITYD_SERVER_RPC_PEER_RATE_LIMITER_H_
#define VERITYD_SERVER_RPC_PEER_RATE_LIMITER_H_

#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace verity::server {

// Each peer (grpc::ServerContext::peer(): address and port, so one TCP
// connection) may make `per_second` requests a second on average and up to a
// second's worth (at least one) at once. A peer idle long enough to refill is
// forgotten, so memory follows the number of busy connections. Thread-safe.
class PeerRateLimiter {
 public:
  using Clock = std::function<absl::Time()>;

  // A zero `per_second` admits everything.
  explicit PeerRateLimiter(double per_second, Clock clock = absl::Now);

  // OK, or RESOURCE_EXHAUSTED if `peer` is over its rate.
  absl::Status Admit(absl::string_view peer) ABSL_LOCKS_EXCLUDED(mu_);

  // Peers remembered now, for tests.
  size_t peers() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Bucket {
    double tokens;
    absl::Time updated;
  };

  // Drops the buckets that have refilled (once per refill time at most).
  void ForgetIdle(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const double per_second_;
  const double burst_;
  const absl::Duration refill_time_;  // from empty to burst_
  const Clock clock_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
  absl::Time next_sweep_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_PEER_RATE_LIMITER_H_
