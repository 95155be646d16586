// How much time one thread may spend verifying inline: at most `budget` in
// each `window`. The analog of the kernel's cap on softirq work (2 ms, or
// need_resched): a completion thread that has been busy verifying too long
// hands further work to the pool, so it goes back to completing I/O. Not
// thread-safe: one per thread.

#ifndef VERITYD_SERVER_DISPATCH_INLINE_BUDGET_H_
#define VERITYD_SERVER_DISPATCH_INLINE_BUDGET_H_

#include "absl/time/time.h"

namespace verity::server {

struct InlineBudgetOptions {
  // A completion thread verifies inline for at most 2 ms (the kernel's
  // MAX_SOFTIRQ_TIME) of every 10 ms.
  absl::Duration budget = absl::Milliseconds(2);
  absl::Duration window = absl::Milliseconds(10);
};

class InlineBudget {
 public:
  // True if inline work may start at `now`.
  bool HasBudget(absl::Time now, const InlineBudgetOptions& options) {
    Roll(now, options);
    return spent_ < options.budget;
  }

  // Records inline work that started at `start` and took `spent`.
  void Charge(absl::Time start, absl::Duration spent,
              const InlineBudgetOptions& options) {
    Roll(start, options);
    spent_ += spent;
  }

 private:
  void Roll(absl::Time now, const InlineBudgetOptions& options) {
    if (now - window_start_ >= options.window) {
      window_start_ = now;
      spent_ = absl::ZeroDuration();
    }
  }

  absl::Time window_start_ = absl::InfinitePast();
  absl::Duration spent_ = absl::ZeroDuration();
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_INLINE_BUDGET_H_
