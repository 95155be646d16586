// The inline time budget: spent within a window, renewed by the next window.

#include "server/dispatch/inline_budget.h"

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(InlineBudgetTest, SpentBudgetWaitsForTheNextWindow) {
  const InlineBudgetOptions options{absl::Milliseconds(2),
                                    absl::Milliseconds(10)};
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  InlineBudget budget;
  EXPECT_TRUE(budget.HasBudget(t0, options));
  budget.Charge(t0, absl::Microseconds(1500), options);
  EXPECT_TRUE(budget.HasBudget(t0 + absl::Milliseconds(2), options));
  budget.Charge(t0 + absl::Milliseconds(2), absl::Microseconds(500), options);
  EXPECT_FALSE(budget.HasBudget(t0 + absl::Milliseconds(3), options));
  EXPECT_FALSE(budget.HasBudget(t0 + absl::Microseconds(9999), options));
  EXPECT_TRUE(budget.HasBudget(t0 + absl::Milliseconds(10), options));
}

TEST(InlineBudgetTest, OneLongJobSpendsTheWholeWindow) {
  const InlineBudgetOptions options;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  InlineBudget budget;
  budget.Charge(t0, absl::Milliseconds(5), options);
  EXPECT_FALSE(budget.HasBudget(t0 + absl::Milliseconds(5), options));
  EXPECT_TRUE(budget.HasBudget(t0 + options.window, options));
}

}  // namespace
}  // namespace verity::server
