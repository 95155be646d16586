// Implements InlineTuner.

#include "server/dispatch/inline_tuner.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

namespace verity::server {

InlineTuner::InlineTuner(
    const InlineTunerOptions& options,
    std::function<void(const InlineLimitChange&)> on_change)
    : options_(options), on_change_(std::move(on_change)) {
  for (PriorityClass c : kAllPriorityClasses) {
    limits_[Index(c)].store(
        c == PriorityClass::kIdle ? 0 : options.prior.For(c),
        std::memory_order_relaxed);
  }
  period_end_ns_.store(absl::ToUnixNanos(absl::Now() + options_.period));
  absl::MutexLock lock(&mu_);
  seconds_per_byte_ = absl::ToDoubleSeconds(options_.prior_hash_4k) / 4096;
  for (ClassState& state : classes_) {
    state.handoff_seconds = absl::ToDoubleSeconds(options_.prior_handoff);
  }
}

InlineLimits InlineTuner::limits() const {
  InlineLimits limits;
  for (PriorityClass c : kAllPriorityClasses) {
    limits.bytes[Index(c)] = limits_[Index(c)].load(std::memory_order_relaxed);
  }
  return limits;
}

void InlineTuner::ObserveVerify(uint64_t bytes, absl::Duration spent) {
  absl::MutexLock lock(&mu_);
  verify_bytes_ += static_cast<double>(bytes);
  verify_seconds_ += absl::ToDoubleSeconds(spent);
}

void InlineTuner::ObserveQueueWait(PriorityClass priority_class,
                                   absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  ClassState& state = classes_[Index(priority_class)];
  state.wait_seconds += absl::ToDoubleSeconds(wait);
  ++state.waits;
}

void InlineTuner::ObserveInlineChoice(PriorityClass priority_class,
                                      bool budget_declined) {
  absl::MutexLock lock(&mu_);
  ClassState& state = classes_[Index(priority_class)];
  ++state.choices;
  if (budget_declined) ++state.declined;
}

void InlineTuner::Adjust(absl::Time now) {
  const int64_t now_ns = absl::ToUnixNanos(now);
  if (now_ns < period_end_ns_.load(std::memory_order_relaxed)) return;
  std::vector<InlineLimitChange> changes;
  {
    absl::MutexLock lock(&mu_);
    // Another thread may have closed this period meanwhile.
    if (now_ns < period_end_ns_.load(std::memory_order_relaxed)) return;
    period_end_ns_.store(absl::ToUnixNanos(now + options_.period),
                         std::memory_order_relaxed);
    const double w = options_.weight;
    if (verify_bytes_ > 0) {
      seconds_per_byte_ =
          (1 - w) * seconds_per_byte_ + w * verify_seconds_ / verify_bytes_;
    }
    verify_bytes_ = verify_seconds_ = 0;
    for (PriorityClass c : kAllPriorityClasses) {
      ClassState& state = classes_[Index(c)];
      if (state.waits > 0) {
        state.handoff_seconds = (1 - w) * state.handoff_seconds +
                                w * state.wait_seconds / state.waits;
      }
      const bool judged = !options_.fixed[Index(c)] &&
                          c != PriorityClass::kIdle &&
                          state.waits + state.choices >= options_.min_samples;
      if (judged) {
        const uint64_t from = limits_[Index(c)].load(std::memory_order_relaxed);
        std::string why;
        const uint64_t to = Judge(state, from, &why);
        if (to != from) {
          limits_[Index(c)].store(to, std::memory_order_relaxed);
          changes.push_back({c, from, to, std::move(why)});
        }
      }
      state.wait_seconds = 0;
      state.waits = state.choices = state.declined = 0;
    }
  }
  for (const InlineLimitChange& change : changes) on_change_(change);
}

uint64_t InlineTuner::Judge(ClassState& state, uint64_t limit,
                            std::string* why) {
  const absl::Duration hash_4k = absl::Seconds(seconds_per_byte_ * 4096);
  const absl::Duration handoff = absl::Seconds(state.handoff_seconds);
  uint64_t target = std::clamp(UrgentInlineLimit(hash_4k, handoff),
                               options_.min_bytes, options_.max_bytes);
  const double declined =
      state.choices > 0 ? double{1} * state.declined / state.choices : 0;
  if (state.choices >= options_.min_samples &&
      declined > options_.budget_pressure) {
    target = std::min(target, std::max(options_.min_bytes, limit / 2));
  }
  *why = absl::StrFormat(
      "hash %.2f ns/B, queue wait %.1f us, budget declined %.0f%%",
      seconds_per_byte_ * 1e9, state.handoff_seconds * 1e6, declined * 100);
  const int direction = target > limit ? 1 : (target < limit ? -1 : 0);
  if (direction != state.pending_direction) {
    state.pending_direction = direction;
    state.pending_periods = 0;
  }
  if (direction == 0 || ++state.pending_periods < options_.confirmations) {
    return limit;
  }
  state.pending_periods = 0;
  return direction > 0 ? std::min(limit * 2, options_.max_bytes)
                       : std::max(limit / 2, options_.min_bytes);
}

}  // namespace verity::server
