// Implements FromGrpcStatus.

#include "client/sdk/grpc_status.h"

#include <string>

namespace verity::client {

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  const int code = status.error_code();
  // A code outside the canonical range would otherwise become an absl code
  // that nothing handles.
  if (code <= 0 ||
      code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::UnknownError(status.error_message());
  }
  return absl::Status(static_cast<absl::StatusCode>(code),
                      status.error_message());
}

}  // namespace verity::client
