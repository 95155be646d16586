// How a raw read call (Read, ReadSmall, BatchRead: their requests arrive as
// bytes) begins: admitted with the read role, its stream slot free, its
// request parsed. The first refusal otherwise.

#ifndef VERITYD_SERVER_RPC_RAW_READ_REQUEST_H_
#define VERITYD_SERVER_RPC_RAW_READ_REQUEST_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "server/auth/role.h"
#include "server/metrics/service_metrics.h"
#include "server/rpc/call_admission.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// `Request` is the call's request message type.
template <typename Request>
absl::StatusOr<Request> AdmitRawRead(const ServiceContext& context,
                                     const grpc::CallbackServerContext& call,
                                     RpcMethod method, const StreamSlot& slot,
                                     const grpc::ByteBuffer& request) {
  if (absl::Status admitted =
          AdmitCall(context.gate, call, Role::kRead, RpcMethodName(method));
      !admitted.ok()) {
    return admitted;
  }
  if (!slot.status().ok()) return slot.status();
  Request parsed;
  grpc::ByteBuffer copy(request);  // shares the slices
  if (!grpc::SerializationTraits<Request>::Deserialize(&copy, &parsed).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed ", Request::descriptor()->name()));
  }
  return parsed;
}

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_RAW_READ_REQUEST_H_
