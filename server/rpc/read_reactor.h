// One Read stream over gRPC: checks and opens the request (on the I/O
// executor if the store is remote), then carries a ReadStream's events in and
// its messages out. Messages go out as ByteBuffers whose data is the chunk's
// own buffer, not a copy (read_response_wire.h).

#ifndef VERITYD_SERVER_RPC_READ_REACTOR_H_
#define VERITYD_SERVER_RPC_READ_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/priority_class.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/read_stream.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Owned by gRPC: deletes itself in OnDone(), which gRPC calls after Finish()
// and after every other reaction has returned. The stream calls Finish() only
// once nothing it started is in flight; what outlives the reactor holds the
// stream, never the reactor. The gRPC shape of the callback examples: one
// write in flight, OnWriteDone() leading to the next.
class ReadReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer>,
                          private ReadStreamOutput {
 public:
  // `request` is a serialized v1::ReadRequest.
  ReadReactor(ServiceContext* context, grpc::CallbackServerContext* call,
              const grpc::ByteBuffer& request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Opens the request and starts the stream (or ends it with why not).
  void Open(const v1::ReadRequest& request);
  absl::StatusOr<ReadStream::Opened> CheckAndOpen(
      const v1::ReadRequest& request);

  // ReadStreamOutput.
  void StartWrite(ReadMessage message) override;
  void ChunkRead(uint64_t bytes) override;
  void Finish(absl::Status status) override;

  ServiceContext* const context_;
  CallTimer timer_;
  StreamSlot slot_;
  // Waits while a message is being written: the client must take it.
  StreamWatchdog::Stream watch_;
  const std::shared_ptr<ReadStream> stream_;
  v1::ReadRequest request_;
  // Set by Open() before the stream starts; read by the stream's steps.
  std::shared_ptr<VerifiedBlob> blob_;
  // A Read by name: the statement stored with the name, for the first
  // message (empty: none, or by digest).
  std::string name_statement_;
  PriorityClass priority_class_ = PriorityClass::kNone;
  // The write in flight (one at most): the stream's steps, one thread at a
  // time.
  grpc::ByteBuffer wire_;
  // The tree bytes the cache last charged: ChunkRead(), one read at a time.
  uint64_t charged_tree_bytes_ = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_REACTOR_H_
