// A one-line transfer progress display for a terminal: bytes, rate and time
// left, redrawn at most five times a second and erased when done.

#ifndef VERITYD_CLIENT_CLI_PROGRESS_METER_H_
#define VERITYD_CLIENT_CLI_PROGRESS_METER_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace verity::cli {

// "  12.0 MiB / 100.0 MiB  12%  3.4 MiB/s  ETA 0:26"; the rate and ETA are
// left out until some time has passed.
std::string FormatProgress(uint64_t done, uint64_t total,
                           absl::Duration elapsed);

// Thread-safe: the parts of a parallel fetch report concurrently. Does not
// own `out`.
class ProgressMeter {
 public:
  using Clock = std::function<absl::Time()>;

  ProgressMeter(std::FILE* out, uint64_t total, Clock clock = &absl::Now);

  void Add(uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);
  // Erases the line; later calls draw nothing.
  void Finish() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void DrawLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::FILE* const out_;
  const uint64_t total_;
  const Clock clock_;
  const absl::Time start_;
  absl::Mutex mu_;
  uint64_t done_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_draw_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  size_t drawn_width_ ABSL_GUARDED_BY(mu_) = 0;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_PROGRESS_METER_H_
