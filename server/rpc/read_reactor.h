// One Read stream over gRPC: a ReadCall whose messages are the stream's
// writes, one in flight at most, each watched for a client that stops taking
// them.

#ifndef VERITYD_SERVER_RPC_READ_REACTOR_H_
#define VERITYD_SERVER_RPC_READ_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include "server/rpc/read_call.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Owned by gRPC: deletes itself in OnDone(), which gRPC calls after Finish()
// and after every other reaction has returned. The gRPC shape of the callback
// examples: one write in flight, OnWriteDone() leading to the next.
class ReadReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer>,
                          private ReadCall {
 public:
  // `request` is a serialized v1::ReadRequest.
  ReadReactor(ServiceContext* context, grpc::CallbackServerContext* call,
              const grpc::ByteBuffer& request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // ReadCall.
  void Send(grpc::ByteBuffer* wire) override;
  void End(const grpc::Status& status) override;

  // Waits while a message is being written: the client must take it.
  StreamWatchdog::Stream watch_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_REACTOR_H_
