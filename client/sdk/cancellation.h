// Stops the streams of a fetch together: the first part to fail cancels the
// RPCs of the others and cuts their backoff sleeps short.

#ifndef VERITYD_CLIENT_SDK_CANCELLATION_H_
#define VERITYD_CLIENT_SDK_CANCELLATION_H_

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace verity::client {

// Thread-safe. Registered contexts are not owned; each must be unregistered
// before it is destroyed.
class Cancellation {
 public:
  // Records `reason` (the first one wins) and cancels every registered RPC.
  void Cancel(absl::Status reason) ABSL_LOCKS_EXCLUDED(mu_);

  // OK until Cancel(); then the first reason.
  absl::Status status() const ABSL_LOCKS_EXCLUDED(mu_);

  // Makes `context` cancellable; false (and not registered) if Cancel()
  // came first, in which case its RPC should not start.
  bool Register(grpc::ClientContext* context) ABSL_LOCKS_EXCLUDED(mu_);
  void Unregister(grpc::ClientContext* context) ABSL_LOCKS_EXCLUDED(mu_);

  // Sleeps for `delay`, or less if cancelled; false if cancelled.
  bool SleepFor(absl::Duration delay) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status reason_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<grpc::ClientContext*> contexts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_CANCELLATION_H_
