// What a Read stream and a ReadSmall unary call add to their BlobRead:
// admitting the call and parsing its request, its stream slot, and its timer.
// The gRPC reactors (read_reactor.h, small_read_reactor.h) add only how a
// message leaves and how the call ends.

#ifndef VERITYD_SERVER_RPC_READ_CALL_H_
#define VERITYD_SERVER_RPC_READ_CALL_H_

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "server/metrics/service_metrics.h"
#include "server/rpc/blob_read.h"
#include "server/rpc/service_context.h"

namespace verity::server {

class ReadCall : public BlobRead {
 protected:
  // `method` is kRead (a stream of any length) or kReadSmall (one message,
  // for a range FitsSmallRead()).
  ReadCall(ServiceContext* context, RpcMethod method);
  ~ReadCall() override = default;

  // Admits `call`, then checks and opens `request` (a serialized
  // v1::ReadRequest) and starts the stream, or ends the call with why not.
  // Called once, by the reactor's constructor once the reactor is whole:
  // the hooks may be called from then on, even before this returns.
  void Begin(const grpc::CallbackServerContext& call,
             const grpc::ByteBuffer& request);

 private:
  // Ends the call with `status`: the last hook called.
  virtual void End(const grpc::Status& status) = 0;

  // BlobRead.
  void Done(absl::Status status) override;

  const RpcMethod method_;
  CallTimer timer_;
  StreamSlot slot_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_CALL_H_
