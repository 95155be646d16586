// One BatchRead call over gRPC: each blob it asks for is a BlobRead of the
// whole blob in one message (as ReadSmall reads it, dispatched inline or on
// the verify pool by its size and the call's class), all started at once;
// the response is built when the last one ends, each blob's message framed
// around its own buffers. The call is admitted, takes a stream slot and is
// timed once; its blobs share a byte budget (kMaxBatchReadBytes).

#ifndef VERITYD_SERVER_RPC_BATCH_READ_REACTOR_H_
#define VERITYD_SERVER_RPC_BATCH_READ_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "server/metrics/service_metrics.h"
#include "server/rpc/read_response_wire.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Owned by gRPC: deletes itself in OnDone(), after Finish().
class BatchReadReactor final : public grpc::ServerUnaryReactor {
 public:
  // `request` is a serialized v1::BatchReadRequest; `response` is gRPC's,
  // filled before Finish().
  BatchReadReactor(ServiceContext* context, grpc::CallbackServerContext* call,
                   const grpc::ByteBuffer& request, grpc::ByteBuffer* response);
  ~BatchReadReactor() override;

  void OnCancel() override;
  void OnDone() override { delete this; }
  // As SmallReadReactor's: OnCancel() only records events, OnDone() frees.
  bool InternalInlineable() override { return true; }

 private:
  class Blob;

  // Ends the call with `status`, or (OK) with the blobs' response.
  void End(absl::Status status);
  // Blob `index` ended: the call ends with the last.
  void BlobDone(size_t index, absl::Status status);
  // Takes `bytes` of the call's budget, or says why not.
  absl::Status TakeBytes(uint64_t bytes);

  ServiceContext* const context_;
  grpc::ByteBuffer* const response_;
  CallTimer timer_;
  StreamSlot slot_;
  // Made before any starts, then fixed: one per requested digest.
  std::vector<std::unique_ptr<Blob>> blobs_;
  // Each blob's wire and status, written by that blob alone before it ends;
  // read once all ended (pending_ orders them).
  std::vector<BatchReadPart> parts_;
  std::atomic<size_t> pending_{0};
  std::atomic<uint64_t> bytes_left_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_BATCH_READ_REACTOR_H_
