// A server's scrubbing: passes over the whole store (scrubber.h) on a thread
// of their own at the lowest CPU and I/O priority (SCHED_IDLE, the IDLE I/O
// class) and within a byte rate, every interval if set (--scrub_interval)
// and when an admin asks (the Scrub RPC, `verity scrub`). A pass a restart
// cut short is resumed where it stopped; replicas sharing a store take turns
// by the scrub lease, and each finds from the shared position when the last
// pass completed.

#ifndef VERITYD_SERVER_UPKEEP_SCRUBS_H_
#define VERITYD_SERVER_UPKEEP_SCRUBS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/store/store.h"
#include "server/upkeep/scrubber.h"
#include "server/upkeep/upkeep_metrics.h"

namespace verity::server {

struct ScrubsOptions {
  // Zero: only when asked (or to finish a pass a restart cut short).
  absl::Duration interval = absl::ZeroDuration();
  // Store bytes read per second; 0: no limit.
  uint64_t bytes_per_second = 0;
  // How long to wait before trying again when a pass could not run (another
  // replica holds the lease, the store did not answer).
  absl::Duration retry = absl::Minutes(1);
  // The repair hook (ScrubHooks::repair), the report of damage
  // (ScrubPassOptions::report) and the log (one line per pass). The log
  // must be set.
  std::function<absl::StatusOr<int>(std::shared_ptr<VerifiedBlob>,
                                    const absl::Status&)>
      repair;
  std::function<void(const ParsedDigest&, const absl::Status&)> report;
  std::function<void(absl::string_view)> log;
};

// Thread-safe. `metrics` may be null.
class Scrubs {
 public:
  Scrubs(std::shared_ptr<Store> store, std::shared_ptr<ScrubMetrics> metrics,
         ScrubsOptions options);
  // Stop().
  ~Scrubs();

  // Starts the scrub thread, as `holder` (see Collections::Start). Call
  // once, before RunNow.
  void Start(std::string holder) ABSL_LOCKS_EXCLUDED(mu_);

  // Asks for a pass now (one under way counts if it began after this call,
  // else the next). With `wait`, returns once that pass ended: its report,
  // or its error (ABORTED while another replica holds the lease).
  // Blocking with `wait`; without, reads the store's position.
  absl::StatusOr<ScrubStatus> RunNow(bool wait) ABSL_LOCKS_EXCLUDED(mu_);

  // Ends the thread; a pass under way stops before its next blob, or in
  // its pacing, its position saved. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // Whether a pass is due now: asked, one to resume, or the interval since
  // the last complete one passed; else how long until one may be.
  absl::Duration UntilDue(const ScrubPosition& position, absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<ScrubReport> RunPass() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until `bytes` more may be read at the rate.
  absl::Status Pace(uint64_t bytes);

  const std::shared_ptr<Store> store_;
  const std::shared_ptr<ScrubMetrics> metrics_;
  const ScrubsOptions options_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;

  absl::Mutex mu_;
  std::string holder_ ABSL_GUARDED_BY(mu_) = "verityd";
  bool asked_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  // Passes begun and ended, and how the last one ended.
  uint64_t begun_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t ended_ ABSL_GUARDED_BY(mu_) = 0;
  absl::StatusOr<ScrubReport> last_ ABSL_GUARDED_BY(mu_);

  // The pass's pacing: bytes read since `paced_from_`. Scrub thread only.
  absl::Time paced_from_;
  uint64_t paced_bytes_ = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_SCRUBS_H_
