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
  // OnDone() and OnCancel() run on whichever gRPC thread ends the call, not
  // on gRPC's executor: two thread hand-offs less per call (the gain is in
  // docs/bench-small-reads.md). gRPC allows this for reactions
  // that never block, which these are: OnCancel() records an event and may
  // end the stream, OnDone() frees the call. gRPC marks the hook as not API
  // (its own DefaultReactor uses it); were it removed, `override` would stop
  // the build.
  bool InternalInlineable() override { return true; }

 private:
  // ReadCall.
  void Send(grpc::ByteBuffer* wire) override;
  void End(const grpc::Status& status) override;

  grpc::ByteBuffer* const response_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_SMALL_READ_REACTOR_H_
