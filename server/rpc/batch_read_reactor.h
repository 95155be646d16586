// One BatchRead call over gRPC: each blob it asks for is a BlobRead of the
// whole blob in one message (as ReadSmall reads it, dispatched inline or on
// the verify pool by its size and the call's class); the response is built
// when the last one ends, each blob's message framed around its own buffers.
// The call is admitted, takes a stream slot and is timed once. What it may
// hold is charged to the server's budgets before any blob is opened: up to
// kBatchReadWindow blobs being opened and read at once (from
// ServiceOptions::max_batch_read_blobs, shared by every call; the next
// starts as one ends), and the bytes its blobs may total (from the read
// window, ServiceContext::chunk_budget); a call that finds either spent is
// RESOURCE_EXHAUSTED, to be retried. Its blobs share a byte limit
// (kMaxBatchReadBytes).

#ifndef VERITYD_SERVER_RPC_BATCH_READ_REACTOR_H_
#define VERITYD_SERVER_RPC_BATCH_READ_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/metrics/service_metrics.h"
#include "server/rpc/read_response_wire.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Blobs of one BatchRead call being opened and read at once, at most.
inline constexpr int kBatchReadWindow = 16;

// Owned by gRPC: deletes itself in OnDone(), after Finish().
class BatchReadReactor final : public grpc::ServerUnaryReactor {
 public:
  // `request` is a serialized v1::BatchReadRequest; `response` is gRPC's,
  // filled before Finish().
  BatchReadReactor(ServiceContext* context, grpc::CallbackServerContext* call,
                   const grpc::ByteBuffer& request, grpc::ByteBuffer* response);
  ~BatchReadReactor() override;

  void OnCancel() override;
  void OnDone() override;
  // As SmallReadReactor's: OnCancel() only records events, OnDone() frees.
  bool InternalInlineable() override { return true; }

 private:
  class Blob;

  // Admits and checks the call, and starts its first blobs or ends it.
  void Begin(const grpc::CallbackServerContext& call,
             const grpc::ByteBuffer& request);

  // Takes what the call may hold from the server's budgets for `blobs`
  // blobs, or says why not.
  absl::Status Reserve(size_t blobs);
  // Starts blobs while the window has room; the one thread doing so also
  // ends the call once every blob ended (no other thread touches the
  // reactor after that).
  void Advance() ABSL_LOCKS_EXCLUDED(mu_);
  // Advance() by the thread that set advancing_.
  void AdvanceClaimed() ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the call with `status`, or (OK) with the blobs' response, and gives
  // back what Reserve() took.
  void End(absl::Status status);
  // Blob `index` ended.
  void BlobDone(size_t index, absl::Status status);
  // Takes `bytes` of the call's byte limit, or says why not.
  absl::Status TakeBytes(uint64_t bytes);

  ServiceContext* const context_;
  grpc::ByteBuffer* const response_;
  CallTimer timer_;
  StreamSlot slot_;
  // Made before any starts, then fixed: one per requested digest, and its
  // request until it starts.
  std::vector<std::unique_ptr<Blob>> blobs_;
  std::vector<v1::ReadRequest> reads_;
  // Each blob's wire and status, written by that blob alone before it ends;
  // read once all ended (mu_ orders them).
  std::vector<BatchReadPart> parts_;
  // What Reserve() took of the server's budgets.
  uint64_t window_ = 0;
  uint64_t reserved_bytes_ = 0;
  absl::Mutex mu_;
  size_t started_ ABSL_GUARDED_BY(mu_) = 0;
  size_t ended_ ABSL_GUARDED_BY(mu_) = 0;
  bool advancing_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> bytes_left_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_BATCH_READ_REACTOR_H_
