#include "lib/base/parallel_for.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace verity {
namespace {

// The next index to hand out, and the lowest failed one.
class Work {
 public:
  explicit Work(size_t n) : n_(n) {}

  // False when nothing is left or a call has failed.
  bool Next(size_t* index) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (next_ >= n_ || !first_error_.ok()) return false;
    *index = next_++;
    return true;
  }

  void Fail(size_t index, absl::Status status) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (first_error_.ok() || index < failed_index_) {
      first_error_ = std::move(status);
      failed_index_ = index;
    }
  }

  absl::Status Result() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return first_error_;
  }

 private:
  const size_t n_;
  absl::Mutex mu_;
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
  size_t failed_index_ ABSL_GUARDED_BY(mu_) = 0;
};

void Drain(Work& work, const std::function<absl::Status(size_t)>& fn) {
  size_t index;
  while (work.Next(&index)) {
    absl::Status status = fn(index);
    if (!status.ok()) work.Fail(index, std::move(status));
  }
}

}  // namespace

absl::Status ParallelFor(size_t n, int threads,
                         const std::function<absl::Status(size_t)>& fn) {
  Work work(n);
  const size_t helpers =
      std::min<size_t>(n, static_cast<size_t>(std::max(threads, 1))) - (n > 0);
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (size_t i = 0; i < helpers; ++i) {
    pool.emplace_back([&work, &fn] { Drain(work, fn); });
  }
  Drain(work, fn);
  for (std::thread& thread : pool) thread.join();
  return work.Result();
}

absl::Status ParallelFor(Executor& executor, size_t n, int window,
                         const std::function<absl::Status(size_t)>& fn) {
  Work work(n);
  const size_t helpers =
      std::min<size_t>(n, static_cast<size_t>(std::max(window, 1))) - (n > 0);
  absl::Mutex mu;
  size_t running = 0;
  for (size_t i = 0; i < helpers; ++i) {
    {
      absl::MutexLock lock(&mu);
      ++running;
    }
    const absl::Status queued = executor.Submit([&work, &fn, &mu, &running] {
      Drain(work, fn);
      absl::MutexLock lock(&mu);
      --running;
    });
    // A full queue: the caller's thread does the work alone.
    if (!queued.ok()) {
      absl::MutexLock lock(&mu);
      --running;
      break;
    }
  }
  Drain(work, fn);
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](size_t* left) { return *left == 0; }, &running));
  return work.Result();
}

}  // namespace verity
