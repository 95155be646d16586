// Implements ReadReactor.

#include "server/rpc/read_reactor.h"

#include "server/rpc/grpc_handoff.h"

namespace verity::server {

ReadReactor::ReadReactor(ServiceContext* context,
                         grpc::CallbackServerContext* call,
                         const grpc::ByteBuffer& request)
    : ReadCall(context, RpcMethod::kRead),
      watch_(context->watchdog.get(), [call] { call->TryCancel(); }) {
  Begin(*call, request);
  // Returned to gRPC, which may call OnCancel() from another thread at once.
  HandToGrpc(this);
}

void ReadReactor::OnCancel() {
  TakeFromGrpc(this);
  stream().OnCancel();
}

void ReadReactor::OnDone() {
  OnDoneScope scope(this, context());
  watch_.Close();
  delete this;
}

void ReadReactor::OnWriteDone(bool ok) {
  TakeFromGrpc(this);
  watch_.StopWaiting();
  // Not written: the client went away, cancelled or stalled.
  stream().OnWriteDone(
      ok ? absl::OkStatus()
         : (watch_.expired() ? context()->watchdog->IdleError()
                             : absl::CancelledError("the client went away")));
}

void ReadReactor::Send(grpc::ByteBuffer* wire) {
  watch_.StartWaiting();
  HandToGrpc(this);
  grpc::ServerWriteReactor<grpc::ByteBuffer>::StartWrite(wire);
}

void ReadReactor::End(const grpc::Status& status) {
  HandToGrpc(this);
  grpc::ServerWriteReactor<grpc::ByteBuffer>::Finish(status);
}

}  // namespace verity::server
