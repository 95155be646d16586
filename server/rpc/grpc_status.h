// The one place where the server turns an absl::Status into the grpc::Status a
// client sees.

#ifndef VERITYD_SERVER_RPC_GRPC_STATUS_H_
#define VERITYD_SERVER_RPC_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"

namespace verity::server {

// absl and gRPC share the canonical code numbers, so the code maps one to one.
inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_GRPC_STATUS_H_
