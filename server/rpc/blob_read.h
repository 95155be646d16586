// One read of one blob, as a Read stream, a ReadSmall call and each blob of a
// BatchRead make it: checking and opening its request (on the I/O executor if
// the store is remote), carrying its ReadStream's messages out as ByteBuffers
// whose data is the chunk's own buffer (read_response_wire.h), counting its
// bytes, and reporting corruption before it ends. What a call adds around it
// (admission, its timer and stream slot, how a message leaves and how the
// call ends) is the subclass's.

#ifndef VERITYD_SERVER_RPC_BLOB_READ_H_
#define VERITYD_SERVER_RPC_BLOB_READ_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/priority_class.h"
#include "lib/tree/read_plan.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/read_stream.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Lives as long as what it is part of; the stream calls Finish() only once
// nothing it started is in flight, and what outlives the read holds the
// stream, never the read.
class BlobRead : private ReadStreamOutput {
 public:
  BlobRead(const BlobRead&) = delete;
  BlobRead& operator=(const BlobRead&) = delete;

 protected:
  // A stream of any length, or (`one_message`) a range that FitsSmallRead(),
  // read as one chunk: ReadSmall's and each blob of a BatchRead.
  BlobRead(ServiceContext* context, bool one_message);
  ~BlobRead() override = default;

  // Checks and opens `request`, then starts the stream. The hooks below may be
  // called from then on, even before this returns.
  void Start(v1::ReadRequest request);
  // Ends the read with `status`, through Done(), before it starts.
  void Refuse(absl::Status status) { stream_->Start(std::move(status)); }

  ServiceContext* context() const { return context_; }
  ReadStream& stream() const { return *stream_; }
  // The request's class, once it was checked; kNone before.
  PriorityClass priority_class() const { return priority_class_; }

 private:
  // Sends the serialized message, then calls stream().OnWriteDone() (later,
  // or even before this returns).
  virtual void Send(grpc::ByteBuffer* wire) = 0;
  // The read ends with `status`: the last hook called.
  virtual void Done(absl::Status status) = 0;
  // What the read may also refuse once its blob is open: OK by default.
  virtual absl::Status CheckOpened(const TreeGeometry& /*geometry*/,
                                   ByteRange /*bytes*/) {
    return absl::OkStatus();
  }

  void Open();
  absl::StatusOr<ReadStream::Opened> CheckAndOpen();

  // ReadStreamOutput.
  void StartWrite(ReadMessage message) override;
  void ChunkRead(uint64_t bytes) override;
  void Finish(absl::Status status) override;

  ServiceContext* const context_;
  const bool one_message_;
  const std::shared_ptr<ReadStream> stream_;
  v1::ReadRequest request_;
  // Set by Open() before the stream starts; read by the stream's steps.
  std::shared_ptr<VerifiedBlob> blob_;
  // A read by name: the statement stored with the name, for the first
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

#endif  // VERITYD_SERVER_RPC_BLOB_READ_H_
