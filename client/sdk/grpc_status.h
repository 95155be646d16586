// The client's one conversion from grpc::Status to absl::Status; everything
// past an RPC call site speaks absl::Status.

#ifndef VERITYD_CLIENT_SDK_GRPC_STATUS_H_
#define VERITYD_CLIENT_SDK_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace verity::client {

// Keeps the code (both enums use gRPC's canonical numbers) and the message.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_GRPC_STATUS_H_
