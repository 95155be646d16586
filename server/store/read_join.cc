// Implements ReadJoin.

#include "server/store/read_join.h"

#include <utility>

namespace verity::server {

std::shared_ptr<ReadJoin> ReadJoin::Create(int reads, Done done) {
  return std::shared_ptr<ReadJoin>(new ReadJoin(reads, std::move(done)));
}

void ReadJoin::Report(absl::Status status) {
  Done done;
  absl::Status first;
  {
    absl::MutexLock lock(&mu_);
    if (first_.ok()) first_ = std::move(status);
    if (--left_ > 0) return;
    done = std::move(done_);
    first = first_;
  }
  std::move(done)(std::move(first));
}

}  // namespace verity::server
