// Implements PartBudget on an absl::Mutex condition.

#include "server/store/s3/part_budget.h"

namespace verity::server {

void PartBudget::Acquire() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* free) { return *free > 0; }, &free_));
  --free_;
}

void PartBudget::Release() {
  absl::MutexLock lock(&mu_);
  ++free_;
}

}  // namespace verity::server
