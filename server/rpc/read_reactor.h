// One Read stream: resolves the blob, then writes the requested blocks one
// message at a time, each verified before it is sent (inline or on the
// verification pool, as the Dispatcher decides), with the tree blocks the
// client needs to verify it again.

#ifndef VERITYD_SERVER_RPC_READ_REACTOR_H_
#define VERITYD_SERVER_RPC_READ_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "lib/read_plan.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/dispatch/dispatcher.h"
#include "server/rpc/service_context.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// Owned by gRPC: deletes itself in OnDone(). At most one operation is in
// flight, a write or a verification on the pool, so a slow client holds at most
// one message in server memory and the steps below never run concurrently
// (only OnCancel() may, and it only sets a flag). Finish() is called only when
// nothing is in flight, so the reactor outlives the pool work it starts.
class ReadReactor final : public grpc::ServerWriteReactor<v1::ReadResponse> {
 public:
  ReadReactor(ServiceContext* context, const v1::ReadRequest& request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override { cancelled_.store(true); }
  void OnDone() override { delete this; }

 private:
  absl::Status Start(const v1::ReadRequest& request);
  absl::Status ResolveRange(const v1::ReadRequest& request);
  // Starts the next message: the first carries the descriptor; each carries
  // the next chunk of data once it is read (and verified).
  void WriteNextOrFinish();
  void ReadChunk();
  void OnChunkRead(const absl::Status& status);
  absl::Status AddTreeBlocks(uint64_t first_block, uint64_t end_block);
  absl::StatusOr<std::string> TreeBlockBytes(TreeBlockId id) const;
  void FinishWith(const absl::Status& status);

  ServiceContext* const context_;
  CallTimer timer_;
  StreamSlot slot_;
  std::shared_ptr<VerifiedBlob> blob_;
  uint64_t next_block_ = 0;
  uint64_t end_block_ = 0;
  uint64_t chunk_end_ = 0;  // the chunk being read: [next_block_, chunk_end_)
  bool sent_first_ = false;
  RequestDispatch dispatch_;
  BlockRead read_;
  std::atomic<bool> cancelled_{false};
  // Which tree blocks each chunk carries: those the client neither said it
  // holds nor received with an earlier chunk. Set once the blob is known.
  std::optional<ProofPlanner> proofs_;
  v1::ReadResponse response_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_REACTOR_H_
