// Implements SmallReadReactor.

#include "server/rpc/small_read_reactor.h"

#include "absl/status/status.h"
#include "server/rpc/grpc_handoff.h"

namespace verity::server {

SmallReadReactor::SmallReadReactor(ServiceContext* context,
                                   grpc::CallbackServerContext* call,
                                   const grpc::ByteBuffer& request,
                                   grpc::ByteBuffer* response)
    : ReadCall(context, RpcMethod::kReadSmall), response_(response) {
  Begin(*call, request);
  // Returned to gRPC, which may call OnCancel() from another thread at once.
  HandToGrpc(this);
}

void SmallReadReactor::OnCancel() {
  TakeFromGrpc(this);
  stream().OnCancel();
}

void SmallReadReactor::OnDone() {
  OnDoneScope scope(this, context());
  delete this;
}

// The range is one chunk, so this is the only message: it is kept for
// Finish(), and "written" at once. Its slices still own the chunk's buffer.
void SmallReadReactor::Send(grpc::ByteBuffer* wire) {
  response_->Swap(wire);
  stream().OnWriteDone(absl::OkStatus());
}

void SmallReadReactor::End(const grpc::Status& status) {
  // A failed call sends no message.
  if (!status.ok()) response_->Clear();
  HandToGrpc(this);
  grpc::ServerUnaryReactor::Finish(status);
}

}  // namespace verity::server
