// The bound on the memory of every S3 Put of one store together: a Put takes
// a slot before it fills a part buffer and gives it back once the part is
// uploaded (or dropped).

#ifndef VERITYD_SERVER_STORE_S3_PART_BUDGET_H_
#define VERITYD_SERVER_STORE_S3_PART_BUDGET_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace verity::server {

// Thread-safe. Acquire waits: call it only from a thread whose waiting holds
// up nothing but Puts (the store's Put executor), never from one that reads
// or a gRPC callback need. A Put waits for a slot only while it holds none
// but those of its parts in flight, which free up by themselves: with no
// more Puts at once than slots, a waiting Put always gets one.
class PartBudget {
 public:
  explicit PartBudget(int slots) : free_(slots) {}
  PartBudget(const PartBudget&) = delete;
  PartBudget& operator=(const PartBudget&) = delete;

  // Takes a slot, waiting until one is free.
  void Acquire() ABSL_LOCKS_EXCLUDED(mu_);
  void Release() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  int free_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_PART_BUDGET_H_
