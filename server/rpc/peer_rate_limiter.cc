// Implements PeerRateLimiter: tokens refill continuously at per_second, up to
// per_second; a request takes one.

#include "server/rpc/peer_rate_limiter.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace verity::server {

PeerRateLimiter::PeerRateLimiter(double per_second, Clock clock)
    : per_second_(per_second),
      burst_(std::max(1.0, per_second)),
      refill_time_(per_second > 0 ? absl::Seconds(burst_ / per_second)
                                  : absl::ZeroDuration()),
      clock_(std::move(clock)) {}

absl::Status PeerRateLimiter::Admit(absl::string_view peer) {
  if (per_second_ <= 0) return absl::OkStatus();
  const absl::Time now = clock_();
  absl::MutexLock lock(&mu_);
  ForgetIdle(now);
  auto [it, fresh] = buckets_.try_emplace(peer, Bucket{burst_, now});
  Bucket& bucket = it->second;
  if (!fresh) {
    const double refill =
        absl::ToDoubleSeconds(now - bucket.updated) * per_second_;
    bucket.tokens = std::min(burst_, bucket.tokens + std::max(0.0, refill));
    bucket.updated = std::max(bucket.updated, now);
  }
  if (bucket.tokens < 1) {
    return absl::ResourceExhaustedError(
        absl::StrCat("more than ", per_second_,
                     " requests a second on this connection; retry later"));
  }
  bucket.tokens -= 1;
  return absl::OkStatus();
}

size_t PeerRateLimiter::peers() const {
  absl::MutexLock lock(&mu_);
  return buckets_.size();
}

void PeerRateLimiter::ForgetIdle(absl::Time now) {
  if (now < next_sweep_) return;
  next_sweep_ = now + refill_time_;
  // A bucket untouched that long is full again: the same as a new one.
  absl::erase_if(buckets_, [this, now](const auto& entry) {
    return now - entry.second.updated >= refill_time_;
  });
}

}  // namespace verity::server
