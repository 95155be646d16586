// Cancels streams that wait on their client for too long: a Read whose
// client has not taken the last message, a Put whose client has not sent the
// next one. Without it, a client that reads one message an hour holds a
// stream slot, two chunks of memory and a file for as long as it likes.

#ifndef VERITYD_SERVER_RPC_STREAM_WATCHDOG_H_
#define VERITYD_SERVER_RPC_STREAM_WATCHDOG_H_

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace verity::server {

// One thread checks every stream a quarter of the timeout apart (at most a
// second apart), so a stream is cancelled between 1 and 1.25 timeouts after
// it started waiting. Thread-safe. Every Stream must be closed before this is
// destroyed.
class StreamWatchdog {
 public:
  class Stream;

  // A zero `idle_timeout` watches nothing and starts no thread.
  explicit StreamWatchdog(absl::Duration idle_timeout);
  StreamWatchdog(const StreamWatchdog&) = delete;
  StreamWatchdog& operator=(const StreamWatchdog&) = delete;
  ~StreamWatchdog();

  absl::Duration idle_timeout() const { return idle_timeout_; }

  // What a stream cancelled for waiting too long ends with, for logs and
  // metrics (its client sees CANCELLED).
  absl::Status IdleError() const;

 private:
  void Run() ABSL_LOCKS_EXCLUDED(cancel_mu_, mu_);
  void CancelIdle() ABSL_LOCKS_EXCLUDED(cancel_mu_, mu_);
  void Add(Stream* stream) ABSL_LOCKS_EXCLUDED(mu_);
  void Remove(Stream* stream) ABSL_LOCKS_EXCLUDED(mu_);

  const absl::Duration idle_timeout_;
  // Held while a stream's cancel runs; Stream::Close() waits for it.
  absl::Mutex cancel_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::Mutex mu_;
  absl::flat_hash_set<Stream*> streams_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread thread_;
};

// One watched stream, a member of its reactor. StartWaiting() and
// StopWaiting() may be called from any thread; Close() once, from the call's
// last reaction (OnDone), before the call's context is gone.
class StreamWatchdog::Stream {
 public:
  // `cancel` cancels the call (TryCancel); it runs at most once, on the
  // watchdog's thread, and gRPC may run the call's reactions inside it. A
  // null `watchdog` watches nothing.
  Stream(StreamWatchdog* watchdog, absl::AnyInvocable<void()> cancel);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { Close(); }

  // The stream waits on its client from now on, or no longer does.
  void StartWaiting();
  void StopWaiting() { waiting_since_ns_.store(0); }

  // Stops watching: when it returns, `cancel` is not running (unless this is
  // called from inside it) and will not run.
  void Close();

  // True once `cancel` was called because the stream waited too long.
  bool expired() const { return expired_.load(); }

 private:
  friend class StreamWatchdog;

  StreamWatchdog* watchdog_;
  absl::AnyInvocable<void()> cancel_;
  std::atomic<int64_t> waiting_since_ns_{0};  // 0: not waiting
  std::atomic<bool> expired_{false};
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_STREAM_WATCHDOG_H_
