// PartBudget: slots are taken without waiting while there are any, and a
// taker waits for a Release once there are none.

#include "server/store/s3/part_budget.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(PartBudgetTest, AcquireWaitsForARelease) {
  PartBudget budget(2);
  budget.Acquire();
  budget.Acquire();
  absl::Notification acquired;
  std::thread taker([&] {
    budget.Acquire();
    acquired.Notify();
  });
  EXPECT_FALSE(acquired.WaitForNotificationWithTimeout(absl::Milliseconds(50)))
      << "a third slot of two";
  budget.Release();
  EXPECT_TRUE(acquired.WaitForNotificationWithTimeout(absl::Seconds(30)));
  taker.join();
}

}  // namespace
}  // namespace verity::server
