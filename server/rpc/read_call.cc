// Implements ReadCall.

#include "server/rpc/read_call.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <utility>

#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/call_admission.h"
#include "server/rpc/grpc_status.h"

namespace verity::server {

ReadCall::ReadCall(ServiceContext* context, RpcMethod method)
    : BlobRead(context, method == RpcMethod::kReadSmall),
      method_(method),
      timer_(context->metrics, method),
      slot_(context) {}

void ReadCall::Begin(const grpc::CallbackServerContext& call,
                     const grpc::ByteBuffer& request) {
  if (absl::Status admitted =
          AdmitCall(context()->gate, call, Role::kRead, RpcMethodName(method_));
      !admitted.ok()) {
    Refuse(std::move(admitted));
    return;
  }
  if (!slot_.status().ok()) {
    Refuse(slot_.status());
    return;
  }
  v1::ReadRequest parsed;
  grpc::ByteBuffer copy(request);  // shares the slices
  if (!grpc::SerializationTraits<v1::ReadRequest>::Deserialize(&copy, &parsed)
           .ok()) {
    Refuse(absl::InvalidArgumentError("malformed ReadRequest"));
    return;
  }
  Start(std::move(parsed));
}

void ReadCall::Done(absl::Status status) {
  // Released before the client hears the status, so that its next call
  // finds the slot free.
  slot_.Release();
  timer_.set_priority_class(priority_class());
  timer_.set_code(status.code());
  End(ToGrpcStatus(status));
}

}  // namespace verity::server
