// Implements a server's scrubbing.

#include "server/upkeep/scrubs.h"

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/base/priority_class.h"
#include "lib/base/status_macros.h"
#include "server/dispatch/thread_scheduling.h"

namespace verity::server {
namespace {

// How long a thread waiting for a pass due by the interval sleeps before it
// reads the store's position again (another replica may have scrubbed).
constexpr absl::Duration kRecheck = absl::Minutes(10);

// The calling thread to SCHED_IDLE and the IDLE I/O class (ioprio_set(2)):
// the scrub's reads yield to every read a client waits for. Best effort.
void RunAtIdle(const std::function<void(absl::string_view)>& log) {
  const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (!SetThreadScheduling(tid, ThreadScheduling{SCHED_IDLE, 0})) {
    log("scrub: could not move its thread to SCHED_IDLE");
  }
  constexpr int kWhoProcess = 1;  // IOPRIO_WHO_PROCESS: a thread, by tid
  constexpr int kClassShift = 13;
  const int idle = static_cast<int>(PriorityClass::kIdle) << kClassShift;
  if (syscall(SYS_ioprio_set, kWhoProcess, tid, idle) != 0) {
    log("scrub: could not move its thread to the IDLE I/O class");
  }
}

}  // namespace

Scrubs::Scrubs(std::shared_ptr<Store> store,
               std::shared_ptr<ScrubMetrics> metrics, ScrubsOptions options)
    : store_(std::move(store)),
      metrics_(std::move(metrics)),
      options_(std::move(options)) {
  if (metrics_ != nullptr) metrics_->SetInterval(options_.interval);
}

Scrubs::~Scrubs() { Stop(); }

void Scrubs::Start(std::string holder) {
  {
    absl::MutexLock lock(&mu_);
    holder_ = std::move(holder);
  }
  thread_ = std::thread([this] { Loop(); });
}

void Scrubs::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_.store(true);
  }
  if (thread_.joinable()) thread_.join();
}

absl::Duration Scrubs::UntilDue(const ScrubPosition& position,
                                absl::Time now) const {
  if (asked_ || position.started != absl::UnixEpoch()) {
    return absl::ZeroDuration();
  }
  if (options_.interval <= absl::ZeroDuration()) {
    return absl::InfiniteDuration();
  }
  if (position.completed == absl::UnixEpoch()) return absl::ZeroDuration();
  return std::min(position.completed + options_.interval - now, kRecheck);
}

void Scrubs::Loop() {
  pthread_setname_np(pthread_self(), "scrub");
  RunAtIdle(options_.log);
  const absl::Time began = absl::Now();
  while (!stopping_.load()) {
    const absl::StatusOr<ScrubPosition> position = ReadScrubPosition(*store_);
    absl::Duration wait = options_.retry;
    if (position.ok()) {
      if (metrics_ != nullptr) {
        metrics_->SetLastComplete(position->completed == absl::UnixEpoch()
                                      ? began
                                      : position->completed);
      }
      absl::MutexLock lock(&mu_);
      wait = UntilDue(*position, absl::Now());
    }
    if (wait <= absl::ZeroDuration()) {
      // A pass that could not run is tried again after the retry; one
      // that completed is not due again until the interval.
      if (RunPass().ok()) continue;
      wait = options_.retry;
    }
    absl::MutexLock lock(&mu_);
    const auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return asked_ || stopping_.load();
    };
    mu_.AwaitWithTimeout(absl::Condition(&woken), wait);
  }
  // Wakes anyone still waiting for a pass.
  absl::MutexLock lock(&mu_);
  ended_ = begun_ + 1;
  last_ = absl::CancelledError("the server is stopping");
}

absl::StatusOr<ScrubReport> Scrubs::RunPass() {
  ScrubPassOptions options;
  {
    absl::MutexLock lock(&mu_);
    running_ = true;
    asked_ = false;
    ++begun_;
    options.holder = holder_;
  }
  paced_from_ = absl::Now();
  paced_bytes_ = 0;
  options.hooks.repair = options_.repair;
  options.hooks.pace = [this](uint64_t bytes) { return Pace(bytes); };
  options.report = options_.report;
  if (metrics_ != nullptr) {
    options.checked = [this](const BlobScrub& blob) {
      metrics_->Checked(blob);
    };
  }
  options.log = options_.log;
  options.cancel = &stopping_;
  const absl::StatusOr<ScrubReport> report = RunScrubPass(*store_, options);
  options_.log(report.ok() ? absl::StrCat("scrub pass completed: ",
                                          FormatScrubReport(*report))
                           : absl::StrCat("scrub pass did not complete: ",
                                          report.status().ToString()));
  if (metrics_ != nullptr) {
    metrics_->PassEnded(report.status());
    if (report.ok()) metrics_->SetLastComplete(report->completed);
  }
  absl::MutexLock lock(&mu_);
  running_ = false;
  ++ended_;
  last_ = report;
  return report;
}

absl::Status Scrubs::Pace(uint64_t bytes) {
  if (options_.bytes_per_second != 0) {
    paced_bytes_ += bytes;
    // Until the bytes read before these took their share of the rate.
    const absl::Time due =
        paced_from_ + absl::Seconds(static_cast<double>(paced_bytes_ - bytes) /
                                    options_.bytes_per_second);
    absl::MutexLock lock(&mu_);
    const auto stopping = [this] { return stopping_.load(); };
    mu_.AwaitWithDeadline(absl::Condition(&stopping), due);
  }
  if (stopping_.load()) return absl::CancelledError("the scrub was stopped");
  return absl::OkStatus();
}

absl::StatusOr<ScrubStatus> Scrubs::RunNow(bool wait) {
  ScrubStatus status;
  {
    absl::MutexLock lock(&mu_);
    asked_ = true;
    if (wait) {
      // The first pass begun after this call.
      const uint64_t want = begun_ + 1;
      const auto ended = [this, want]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return ended_ >= want;
      };
      mu_.Await(absl::Condition(&ended));
      RETURN_IF_ERROR(last_.status());
      status.report = *last_;
    }
    status.running = running_;
  }
  ASSIGN_OR_RETURN(status.position, ReadScrubPosition(*store_));
  return status;
}

}  // namespace verity::server
