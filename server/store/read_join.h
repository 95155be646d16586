// Several asynchronous reads seen as one: the pieces of a read that spans
// cache slabs, the data and tree blocks a chunk fetches.

#ifndef VERITYD_SERVER_STORE_READ_JOIN_H_
#define VERITYD_SERVER_STORE_READ_JOIN_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace verity::server {

// Runs `done` once, with the first error or OK, when the last of a known
// number of reads has reported, on that read's thread. Thread-safe; shared by
// the reads' completions, so it lives as long as one of them may report.
class ReadJoin {
 public:
  using Done = absl::AnyInvocable<void(absl::Status) &&>;

  // `reads` must be at least one.
  static std::shared_ptr<ReadJoin> Create(int reads, Done done);

  ReadJoin(const ReadJoin&) = delete;
  ReadJoin& operator=(const ReadJoin&) = delete;

  // One read's outcome; each read reports exactly once.
  void Report(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  ReadJoin(int reads, Done done) : left_(reads), done_(std::move(done)) {}

  absl::Mutex mu_;
  int left_ ABSL_GUARDED_BY(mu_);
  absl::Status first_ ABSL_GUARDED_BY(mu_);
  Done done_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_READ_JOIN_H_
