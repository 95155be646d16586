// Adjusts each class's inline limit while verityd runs, from what it observes,
// so that the choice between verifying inline and handing work to the pool
// follows the machine and the load rather than a constant: Eric Biggers' "the
// kernel [should] choose the best value automatically". The rule is the
// start-up calibration's (UrgentInlineLimit: inline while hashing the request
// costs no more than handing it off), fed with live figures instead of a probe
// at start-up, which remains the prior:
//   - the cost of verifying a byte, from every verification (inline or pool);
//   - the class's handoff cost, its pool queue wait (submit to start);
//   - the budget's pressure: a class whose inline-eligible requests are often
//     declined because the completion thread's budget is spent has its limit
//     halved, since inline time is scarce there.
// Limits stay within [min_bytes, max_bytes], move one power of two at a time,
// and only after the same direction was called for `confirmations` periods
// in a row (hysteresis). IDLE never goes inline; classes set on the command
// line are not tuned.

#ifndef VERITYD_SERVER_DISPATCH_INLINE_TUNER_H_
#define VERITYD_SERVER_DISPATCH_INLINE_TUNER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/priority_class.h"
#include "server/dispatch/dispatch_policy.h"

namespace verity::server {

struct InlineTunerOptions {
  // The start: the calibrated (or configured) limits and the two costs the
  // calibration measured.
  InlineLimits prior = InlineLimits::Uniform(8192);
  absl::Duration prior_hash_4k = absl::Microseconds(3);
  absl::Duration prior_handoff = absl::Microseconds(6);
  // Classes whose limit was given on the command line: left as they are.
  std::array<bool, kNumPriorityClasses> fixed = {};
  uint64_t min_bytes = 4096;
  uint64_t max_bytes = 65536;
  absl::Duration period = absl::Seconds(1);
  // A class is judged in a period only with this many observations of it.
  int min_samples = 20;
  int confirmations = 3;
  // Share of a class's inline-eligible requests declined for the budget above
  // which its limit is halved.
  double budget_pressure = 0.05;
  // Weight of a period's figures in the running estimates.
  double weight = 0.3;
};

// A limit that changed, and the figures that moved it.
struct InlineLimitChange {
  PriorityClass priority_class;
  uint64_t from;
  uint64_t to;
  std::string why;  // e.g. "hash 0.36 ns/B, queue wait 12.0 us, budget 0%"
};

// Thread-safe. Observations take a short lock; limits() does not.
class InlineTuner {
 public:
  // `on_change` runs, outside the lock, for every limit that changes.
  InlineTuner(const InlineTunerOptions& options,
              std::function<void(const InlineLimitChange&)> on_change);

  InlineLimits limits() const;

  // A verification of `bytes` that took `spent`, on either path.
  void ObserveVerify(uint64_t bytes, absl::Duration spent)
      ABSL_LOCKS_EXCLUDED(mu_);
  // How long a pool job of the class waited to start.
  void ObserveQueueWait(PriorityClass priority_class, absl::Duration wait)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A request within the class's limit: verified inline, or sent to the pool
  // because the thread's budget was spent.
  void ObserveInlineChoice(PriorityClass priority_class, bool budget_declined)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Closes the period if `now` is past its end: updates the estimates and
  // the limits. Before the end, a single atomic load.
  void Adjust(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct ClassState {
    // This period's observations.
    double wait_seconds = 0;
    int waits = 0;
    int choices = 0;
    int declined = 0;
    // The running estimate of the handoff cost, and the hysteresis.
    double handoff_seconds = 0;
    int pending_direction = 0;
    int pending_periods = 0;
  };

  // Judges one class at the end of a period; returns its new limit.
  uint64_t Judge(ClassState& state, uint64_t limit, std::string* why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const InlineTunerOptions options_;
  const std::function<void(const InlineLimitChange&)> on_change_;
  std::array<std::atomic<uint64_t>, kNumPriorityClasses> limits_;
  absl::Mutex mu_;
  // When the current period ends, in ns since the Unix epoch: read without
  // the lock, so that Adjust() between period ends costs one atomic load;
  // written under it.
  std::atomic<int64_t> period_end_ns_{0};
  double verify_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  double verify_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  double seconds_per_byte_ ABSL_GUARDED_BY(mu_) = 0;
  std::array<ClassState, kNumPriorityClasses> classes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_INLINE_TUNER_H_
