// One ReadSmall call over gRPC: a ReadCall whose one message is the unary
// response, sent with the call's status in one batch. Its read is dispatched
// as a Read's first chunk is: inline on the callback thread if small and
// urgent enough, else on the verify pool.

#ifndef VERITYD_SERVER_RPC_SMALL_READ_REACTOR_H_
#define VERITYD_SERVER_RPC_SMALL_READ_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include "server/rpc/read_call.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Owned by gRPC: deletes itself in OnDone(), after Finish().
class SmallReadReactor final : public grpc::ServerUnaryReactor,
                               private ReadCall {
 public:
  // `request` is a serialized v1::ReadRequest; `response` is gRPC's, filled
  // before Finish().
  SmallReadReactor(ServiceContext* context, grpc::CallbackServerContext* call,
                   const grpc::ByteBuffer& request, grpc::ByteBuffer* response);

  void OnCancel() override;
  void OnDone() override;

 private:
  // ReadCall.
  void Send(grpc::ByteBuffer* wire) override;
  void End(const grpc::Status& status) override;

  grpc::ByteBuffer* const response_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_SMALL_READ_REACTOR_H_
