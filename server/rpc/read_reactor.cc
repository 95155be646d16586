// Implements ReadReactor.

#include "server/rpc/read_reactor.h"

namespace verity::server {

ReadReactor::ReadReactor(ServiceContext* context,
                         grpc::CallbackServerContext* call,
                         const grpc::ByteBuffer& request)
    : ReadCall(context, RpcMethod::kRead),
      watch_(context->watchdog.get(), [call] { call->TryCancel(); }) {
  Begin(*call, request);
}

void ReadReactor::OnCancel() { stream().OnCancel(); }

void ReadReactor::OnDone() {
  watch_.Close();
  delete this;
}

void ReadReactor::OnWriteDone(bool ok) {
  watch_.StopWaiting();
  // Not written: the client went away, cancelled or stalled.
  stream().OnWriteDone(
      ok ? absl::OkStatus()
         : (watch_.expired() ? context()->watchdog->IdleError()
                             : absl::CancelledError("the client went away")));
}

void ReadReactor::Send(grpc::ByteBuffer* wire) {
  watch_.StartWaiting();
  grpc::ServerWriteReactor<grpc::ByteBuffer>::StartWrite(wire);
}

void ReadReactor::End(const grpc::Status& status) {
  grpc::ServerWriteReactor<grpc::ByteBuffer>::Finish(status);
}

}  // namespace verity::server
