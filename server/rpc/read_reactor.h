// One Read stream: resolves the blob (on the I/O executor if the store is
// remote), then writes the requested blocks one message at a time, each read
// (and verified) by the service's ChunkReader before it is sent, with the tree
// blocks the client needs to verify it again. The next chunk is read while the
// previous one is being sent, as the kernel reads ahead. Messages go out as
// ByteBuffers whose data is the chunk's own buffer, not a copy
// (read_response_wire.h).

#ifndef VERITYD_SERVER_RPC_READ_REACTOR_H_
#define VERITYD_SERVER_RPC_READ_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "lib/read_plan.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/dispatch/read_job.h"
#include "server/rpc/chunk_window.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Owned by gRPC: deletes itself in OnDone(). At most one write and one chunk
// read are in flight, and a chunk read ahead waits for the write before it: a
// slow client holds at most two chunks in server memory. The reader's
// callbacks and gRPC's reactions may run at once; every decision is taken
// under mu_ by NextStep(), and the step it claims runs outside the lock.
// Finish() is called only when nothing is in flight, so the reactor outlives
// the pool work it starts.
class ReadReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  // `request` is a serialized v1::ReadRequest.
  ReadReactor(ServiceContext* context, grpc::CallbackServerContext* call,
              const grpc::ByteBuffer& request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // A chunk read (and verified), not yet sent.
  struct ReadyChunk {
    BlockRange blocks;
    std::string data;
  };
  // What to do next: read the next chunk, write a message (the first one
  // carries the descriptor, and only that if `chunk` is empty) or finish with
  // `status`.
  struct Step {
    enum class Kind { kNone, kRead, kWrite, kFinish };
    Kind kind = Kind::kNone;
    bool first = false;
    std::optional<ReadyChunk> chunk;
    absl::Status status;
  };

  // Start(), then the first steps; or Finish() with Start()'s error.
  void StartAndWrite();
  absl::Status Start(const v1::ReadRequest& request);
  // Runs steps until none can start: called after every event, by a thread
  // that counted itself in advancing_ when it recorded the event.
  void Advance();
  // ClaimStep(), counting the thread out of advancing_ when it is done.
  Step NextStep() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Step ClaimStep() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReadChunk();
  void OnChunkRead(const absl::Status& status);
  // Serializes the message of a kWrite step into wire_ and starts writing it.
  absl::Status Write(Step step);
  absl::Status AddTreeBlocks(BlockRange chunk);
  // The stream ends with `status` once nothing is in flight; the first
  // status wins.
  void EndWith(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FinishWith(const absl::Status& status);

  ServiceContext* const context_;
  CallTimer timer_;
  StreamSlot slot_;
  // Waits while a message is being written: the client must take it.
  StreamWatchdog::Stream watch_;
  std::shared_ptr<VerifiedBlob> blob_;
  // Both set once the blob and range are known, which may be on an I/O
  // thread while OnCancel() runs.
  std::optional<ReadJob> job_;
  std::atomic<bool> job_ready_{false};
  std::atomic<bool> cancelled_{false};
  absl::Mutex mu_;
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool sent_first_ ABSL_GUARDED_BY(mu_) = false;
  // Every chunk was read (job_->done()).
  bool all_read_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<ReadyChunk> ready_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> end_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  // Threads in Advance(); Finish() waits for the last of them.
  int advancing_ ABSL_GUARDED_BY(mu_) = 0;
  // Used by the chunk read in flight only.
  std::optional<ChunkWindow> window_;  // how many blocks the next one reads
  uint64_t charged_tree_bytes_ = 0;    // the tree bytes the cache last charged
  // Used by the write in flight only.
  std::optional<ProofPlanner> proofs_;  // which tree blocks each chunk carries
  v1::ReadResponse response_;           // the message, all but its data
  grpc::ByteBuffer wire_;
  v1::ReadRequest request_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_REACTOR_H_
