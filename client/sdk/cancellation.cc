// Implements Cancellation. TryCancel() is safe from any thread while the
// RPC runs; holding mu_ keeps the context alive until it returns.

#include "client/sdk/cancellation.h"

#include <utility>

namespace verity::client {

void Cancellation::Cancel(absl::Status reason) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return;
  cancelled_ = true;
  reason_ = reason.ok() ? absl::CancelledError("cancelled") : std::move(reason);
  for (grpc::ClientContext* context : contexts_) context->TryCancel();
}

absl::Status Cancellation::status() const {
  absl::MutexLock lock(&mu_);
  return reason_;
}

bool Cancellation::Register(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  if (cancelled_) return false;
  contexts_.insert(context);
  return true;
}

void Cancellation::Unregister(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  contexts_.erase(context);
}

bool Cancellation::SleepFor(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&cancelled_), delay);
  return !cancelled_;
}

}  // namespace verity::client
