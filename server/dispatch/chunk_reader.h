// How a read's chunks come out of the store: verified, by the Dispatcher
// (inline or on the pool), or, for diagnostics only, as they are
// (UnverifiedReader). verityd picks one at start-up; the read stream never
// asks which.

#ifndef VERITYD_SERVER_DISPATCH_CHUNK_READER_H_
#define VERITYD_SERVER_DISPATCH_CHUNK_READER_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/tree/merkle_params.h"
#include "server/dispatch/read_job.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// Two calls, one contract each: TryReadNow() completes before it returns or
// says it cannot, and ReadLater() always completes later, on another thread.
// Implementations are thread-safe.
class ChunkReader {
 public:
  using Done = absl::AnyInvocable<void(absl::Status) &&>;

  virtual ~ChunkReader() = default;

  // Called once when `job` starts, before its first chunk.
  virtual void Begin(const ReadJob& job) = 0;

  // Reads the job's current chunk (StartChunk()) on the calling thread, if
  // the reader may and the store has it here, and returns how that went; the
  // data is then job.chunk()'s. nullopt, with nothing left running, if it
  // cannot finish the chunk now: ReadLater() then continues from there.
  virtual std::optional<absl::Status> TryReadNow(ReadJob& job) = 0;

  // Reads the job's current chunk, continuing where TryReadNow() stopped,
  // then calls `done`: always later, on another thread (the pool's or the
  // store's), never inside the call. Holds `job` until then.
  virtual void ReadLater(std::shared_ptr<ReadJob> job, Done done) = 0;

  // The bytes of tree block `id` to send along, which a verifying reader has
  // verified while reading the chunks that need it.
  virtual absl::StatusOr<std::string> TreeBlock(const VerifiedBlob& blob,
                                                TreeBlockId id) const = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_CHUNK_READER_H_
