// Implements StreamWatchdog. A cancel runs with cancel_mu_ held and mu_ not,
// so that the reactions gRPC may run inside TryCancel() can close streams.

#include "server/rpc/stream_watchdog.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace verity::server {
namespace {

// True on the watchdog's thread while it runs a stream's cancel.
thread_local bool cancelling_here = false;

}  // namespace

StreamWatchdog::StreamWatchdog(absl::Duration idle_timeout)
    : idle_timeout_(idle_timeout) {
  if (idle_timeout_ > absl::ZeroDuration())
    thread_ = std::thread([this] { Run(); });
}

StreamWatchdog::~StreamWatchdog() {
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

absl::Status StreamWatchdog::IdleError() const {
  return absl::DeadlineExceededError(
      absl::StrCat("cancelled: the client made no progress for ",
                   absl::FormatDuration(idle_timeout_)));
}

void StreamWatchdog::Run() {
  const absl::Duration period = std::min(idle_timeout_ / 4, absl::Seconds(1));
  while (!stop_.WaitForNotificationWithTimeout(period)) CancelIdle();
}

void StreamWatchdog::CancelIdle() {
  const int64_t now = absl::GetCurrentTimeNanos();
  const int64_t timeout = absl::ToInt64Nanoseconds(idle_timeout_);
  std::vector<Stream*> idle;
  {
    absl::MutexLock lock(&mu_);
    for (Stream* stream : streams_) {
      const int64_t since = stream->waiting_since_ns_.load();
      if (since != 0 && now - since >= timeout && !stream->expired()) {
        idle.push_back(stream);
      }
    }
  }
  for (Stream* stream : idle) {
    absl::MutexLock cancelling(&cancel_mu_);
    {
      // Closed meanwhile (its call may be gone), or its client caught up.
      absl::MutexLock lock(&mu_);
      if (!streams_.contains(stream)) continue;
      const int64_t since = stream->waiting_since_ns_.load();
      if (since == 0 || now - since < timeout) continue;
    }
    stream->expired_.store(true);
    cancelling_here = true;
    std::move(stream->cancel_)();
    cancelling_here = false;
  }
}

void StreamWatchdog::Add(Stream* stream) {
  absl::MutexLock lock(&mu_);
  streams_.insert(stream);
}

void StreamWatchdog::Remove(Stream* stream) {
  absl::MutexLock lock(&mu_);
  streams_.erase(stream);
}

StreamWatchdog::Stream::Stream(StreamWatchdog* watchdog,
                               absl::AnyInvocable<void()> cancel)
    : watchdog_(watchdog != nullptr && watchdog->thread_.joinable() ? watchdog
                                                                    : nullptr),
      cancel_(std::move(cancel)) {
  if (watchdog_ != nullptr) watchdog_->Add(this);
}

void StreamWatchdog::Stream::StartWaiting() {
  waiting_since_ns_.store(absl::GetCurrentTimeNanos());
}

void StreamWatchdog::Stream::Close() {
  if (watchdog_ == nullptr) return;
  // Waits out a cancel in progress, unless this runs inside one.
  std::optional<absl::MutexLock> cancelling;
  if (!cancelling_here) cancelling.emplace(&watchdog_->cancel_mu_);
  watchdog_->Remove(this);
  watchdog_ = nullptr;
}

}  // namespace verity::server
