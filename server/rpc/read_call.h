// What a Read stream and a ReadSmall unary call share: admitting the call,
// checking and opening its request (on the I/O executor if the store is
// remote), carrying a ReadStream's events in and its messages out as
// ByteBuffers whose data is the chunk's own buffer (read_response_wire.h),
// metrics, and reporting corruption before the call ends. The gRPC reactors
// (read_reactor.h, small_read_reactor.h) add only how a message leaves and
// how the call ends.

#ifndef VERITYD_SERVER_RPC_READ_CALL_H_
#define VERITYD_SERVER_RPC_READ_CALL_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/priority_class.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/metrics/service_metrics.h"
#include "server/rpc/read_stream.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Lives as long as the reactor it is part of; the stream calls Finish() only
// once nothing it started is in flight, and what outlives the call holds the
// stream, never the call.
class ReadCall : private ReadStreamOutput {
 public:
  ReadCall(const ReadCall&) = delete;
  ReadCall& operator=(const ReadCall&) = delete;

 protected:
  // `method` is kRead (a stream of any length) or kReadSmall (one message,
  // for a range FitsSmallRead()).
  ReadCall(ServiceContext* context, RpcMethod method);
  ~ReadCall() override = default;

  // Admits `call`, then checks and opens `request` (a serialized
  // v1::ReadRequest) and starts the stream, or ends the call with why not.
  // Called once, by the reactor's constructor once the reactor is whole:
  // the hooks below may be called from then on, even before this returns.
  void Begin(const grpc::CallbackServerContext& call,
             const grpc::ByteBuffer& request);

  ServiceContext* context() const { return context_; }
  ReadStream& stream() const { return *stream_; }

 private:
  // Sends the serialized message, then calls stream().OnWriteDone() (later,
  // or even before this returns).
  virtual void Send(grpc::ByteBuffer* wire) = 0;
  // Ends the call with `status`: the last hook called.
  virtual void End(const grpc::Status& status) = 0;

  void Open();
  absl::StatusOr<ReadStream::Opened> CheckAndOpen();

  // ReadStreamOutput.
  void StartWrite(ReadMessage message) override;
  void ChunkRead(uint64_t bytes) override;
  void Finish(absl::Status status) override;

  ServiceContext* const context_;
  const RpcMethod method_;
  CallTimer timer_;
  StreamSlot slot_;
  const std::shared_ptr<ReadStream> stream_;
  v1::ReadRequest request_;
  // Set by Open() before the stream starts; read by the stream's steps.
  std::shared_ptr<VerifiedBlob> blob_;
  // A Read by name: the statement stored with the name, for the first
  // message (empty: none, or by digest).
  std::string name_statement_;
  PriorityClass priority_class_ = PriorityClass::kNone;
  // The message being sent (one at most): the stream's steps, one thread at
  // a time.
  grpc::ByteBuffer wire_;
  // The tree bytes the cache last charged: ChunkRead(), one read at a time.
  uint64_t charged_tree_bytes_ = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_CALL_H_
