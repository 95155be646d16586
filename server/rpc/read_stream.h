// One Read stream's logic, without gRPC: the chunks it reads (through the
// ChunkReader) and the messages it writes (through ReadStreamOutput), one of
// each in flight at most, and when it ends. The gRPC reactor (read_reactor.h)
// only carries its events in and its messages out, so tests drive this class
// through any order of completions without a server.

#ifndef VERITYD_SERVER_RPC_READ_STREAM_H_
#define VERITYD_SERVER_RPC_READ_STREAM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/base/buffer_pool.h"
#include "lib/tree/read_plan.h"
#include "server/dispatch/chunk_reader.h"
#include "server/dispatch/read_job.h"
#include "server/rpc/chunk_window.h"

namespace verity::server {

// One message of a Read stream. Plain value.
struct ReadMessage {
  // The stream's first message: it carries the blob's digest and descriptor.
  bool first = false;
  // A chunk, unless `data` is empty: its offset, its bytes (the chunk's
  // pooled buffer) and the tree blocks (by ordinal) the client needs to
  // verify it.
  uint64_t data_offset = 0;
  struct TreeBlock {
    uint64_t index = 0;
    std::string bytes;
  };
  std::vector<TreeBlock> tree_blocks;
  Buffer data;
};

// What a ReadStream asks of the transport that carries it, never under the
// stream's lock. StartWrite() and Finish() come from one thread at a time,
// ChunkRead() from one at a time, perhaps beside them.
class ReadStreamOutput {
 public:
  virtual ~ReadStreamOutput() = default;
  // Starts writing `message`; the transport then calls
  // ReadStream::OnWriteDone(), later or even before this returns.
  virtual void StartWrite(ReadMessage message) = 0;
  // A chunk of `bytes` was read (for metrics, and a cache's charge).
  virtual void ChunkRead(uint64_t bytes) = 0;
  // The stream ends with `status`: the last call the stream makes, once
  // nothing it started is in flight.
  virtual void Finish(absl::Status status) = 0;
};

struct ReadStreamOptions {
  // Data bytes per message: from the first to the second as the client keeps
  // up (ChunkWindow), drawing on `budget`, which must outlive the stream.
  uint64_t chunk_bytes = 256 << 10;
  uint64_t max_chunk_bytes = 2 << 20;
  ByteBudget* budget = nullptr;
};

// Thread-safe; owned by shared_ptr (Create()), which every completion in
// flight holds, so an event that arrives as the stream ends never finds it
// gone. Events may come from any thread, concurrently: each is recorded under
// the lock, and one thread at a time (whichever found none running) takes the
// steps they allow, outside the lock, until there are none. So no step runs
// inside another, and a completion that arrives before the call that started
// it returns is only recorded.
class ReadStream : public std::enable_shared_from_this<ReadStream> {
 public:
  // A request the transport has checked and opened.
  struct Opened {
    std::shared_ptr<ReadJob> job;
    ProofPlanner proofs;  // which tree blocks each chunk carries
  };

  // `reader` and `output` must outlive the stream's Finish().
  static std::shared_ptr<ReadStream> Create(ChunkReader* reader,
                                            ReadStreamOutput* output,
                                            const ReadStreamOptions& options);

  ReadStream(const ReadStream&) = delete;
  ReadStream& operator=(const ReadStream&) = delete;

  // The request is open, or failed to open: the stream starts, or ends with
  // that error. Called once, before anything else happens on the stream
  // (events before it are recorded and wait for it).
  void Start(absl::StatusOr<Opened> opened) ABSL_LOCKS_EXCLUDED(mu_);
  // The write StartWrite() began is done: OK, or why the stream must end.
  void OnWriteDone(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  // The client went away: nothing new starts, and the stream ends CANCELLED
  // once what is in flight is done.
  void OnCancel() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Event {
    enum class Kind { kStart, kChunkRead, kWriteDone, kCancel };
    Kind kind;
    absl::Status status;
    std::optional<Opened> opened;
  };
  // A chunk read (and verified), not yet sent.
  struct ReadyChunk {
    BlockRange blocks;
    Buffer data;
  };
  struct Step {
    enum class Kind { kNone, kRead, kWrite, kFinish };
    Kind kind = Kind::kNone;
    std::shared_ptr<ReadJob> job;
    uint64_t chunk_blocks = 0;  // kRead
    bool first = false;         // kWrite
    std::optional<ReadyChunk> chunk;
    std::vector<TreeBlockId> tree_blocks;
    absl::Status status;  // kFinish
  };

  ReadStream(ChunkReader* reader, ReadStreamOutput* output,
             const ReadStreamOptions& options);

  // Records `event`, then takes the steps it allows unless another thread
  // is taking steps already.
  void Handle(Event event) ABSL_LOCKS_EXCLUDED(mu_);
  void Apply(Event event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyStart(absl::Status status, std::optional<Opened> opened)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyChunkRead(const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The next step, claimed (what it uses is marked in flight).
  Step Claim() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs a step outside the lock; an outcome known at once is returned as
  // the event it is.
  std::optional<Event> Take(Step step) ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<Event> Read(Step step);
  std::optional<Event> Write(Step step);
  // The first status wins.
  void EndWith(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ChunkReader* const reader_;
  ReadStreamOutput* const output_;
  const ReadStreamOptions options_;

  absl::Mutex mu_;
  bool taking_steps_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<ReadJob> job_ ABSL_GUARDED_BY(mu_);
  std::optional<ProofPlanner> proofs_ ABSL_GUARDED_BY(mu_);
  std::optional<ChunkWindow> window_ ABSL_GUARDED_BY(mu_);
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool sent_first_ ABSL_GUARDED_BY(mu_) = false;
  bool all_read_ ABSL_GUARDED_BY(mu_) = false;  // job_->done()
  std::optional<ReadyChunk> ready_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> end_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_READ_STREAM_H_
