// Retries for unary RPCs that only read (Stat, List), with the same policy
// and backoff as read streams.

#ifndef VERITYD_CLIENT_SDK_RPC_RETRY_H_
#define VERITYD_CLIENT_SDK_RPC_RETRY_H_

#include <grpcpp/grpcpp.h>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "verity/options.h"

namespace verity::client {

// Runs `call` with a fresh context (deadline: now + `rpc_timeout` unless
// zero, and never past `deadline`) until it succeeds, fails with a code
// that is not retryable, or has been tried policy.max_attempts times.
// Returns the last status.
absl::Status RetryUnary(
    const sdk::RetryPolicy& policy, absl::Duration rpc_timeout,
    absl::Time deadline,
    absl::FunctionRef<absl::Status(grpc::ClientContext*)> call);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_RPC_RETRY_H_
