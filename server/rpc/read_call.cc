// Implements ReadCall.

#include "server/rpc/read_call.h"

#include <utility>

#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/raw_read_request.h"

namespace verity::server {

ReadCall::ReadCall(ServiceContext* context, RpcMethod method)
    : BlobRead(context, method == RpcMethod::kReadSmall),
      method_(method),
      timer_(context->metrics.get(), method),
      slot_(context) {}

void ReadCall::Begin(const grpc::CallbackServerContext& call,
                     const grpc::ByteBuffer& request) {
  absl::StatusOr<v1::ReadRequest> parsed =
      AdmitRawRead<v1::ReadRequest>(*context(), call, method_, slot_, request);
  if (!parsed.ok()) {
    Refuse(parsed.status());
    return;
  }
  Start(*std::move(parsed));
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
