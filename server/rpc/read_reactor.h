// One Read stream: resolves the blob (on the I/O executor if the store is
// remote), then writes the requested blocks one message at a time, each read
// (and verified) by the service's ChunkReader before it is sent, with the tree
// blocks the client needs to verify it again. Messages go out as ByteBuffers
// whose data is the chunk's own buffer, not a copy (read_response_wire.h).

#ifndef VERITYD_SERVER_RPC_READ_REACTOR_H_
#define VERITYD_SERVER_RPC_READ_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "lib/read_plan.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/dispatch/read_job.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Owned by gRPC: deletes itself in OnDone(). At most one operation is in
// flight, a write or a chunk being read, so a slow client holds at most one
// message in server memory and the steps below never run concurrently (only
// OnCancel() may, and it only flags the job). Finish() is called only when
// nothing is in flight, so the reactor outlives the pool work it starts.
class ReadReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  // `request` is a serialized v1::ReadRequest.
  ReadReactor(ServiceContext* context, const grpc::ByteBuffer& request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override { delete this; }

 private:
  // Start(), then the first message; or Finish() with Start()'s error.
  void StartAndWrite();
  absl::Status Start(const v1::ReadRequest& request);
  absl::StatusOr<BlockRange> BlocksOfRequest(
      const v1::ReadRequest& request, const TreeGeometry& geometry) const;
  // Starts the next message: the first carries the descriptor; each carries
  // the next chunk of data once it is read (and verified).
  void WriteNextOrFinish();
  void ReadChunk();
  void OnChunkRead(const absl::Status& status);
  absl::Status AddTreeBlocks(BlockRange chunk);
  // Serializes response_ with `data` into wire_ and writes it.
  void Write(std::string data);
  void FinishWith(const absl::Status& status);

  ServiceContext* const context_;
  CallTimer timer_;
  StreamSlot slot_;
  std::shared_ptr<VerifiedBlob> blob_;
  // Both set once the blob and range are known, which may be on an I/O
  // thread while OnCancel() runs.
  std::optional<ReadJob> job_;
  std::atomic<bool> job_ready_{false};
  std::atomic<bool> cancelled_{false};
  // Which tree blocks each chunk carries: those the client neither said it
  // holds nor received with an earlier chunk.
  std::optional<ProofPlanner> proofs_;
  bool sent_first_ = false;
  // The blob's verified tree bytes when the cache last charged them.
  uint64_t charged_tree_bytes_ = 0;
  v1::ReadRequest request_;
  // The message being built, all but its data, and then written.
  v1::ReadResponse response_;
  grpc::ByteBuffer wire_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_REACTOR_H_
