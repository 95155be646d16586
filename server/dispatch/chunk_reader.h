// How a read's chunks come out of the store: verified, by the Dispatcher
// (inline or on the pool), or, for diagnostics only, as they are
// (UnverifiedReader). verityd picks one at start-up; the read reactor never
// asks which.

#ifndef VERITYD_SERVER_DISPATCH_CHUNK_READER_H_
#define VERITYD_SERVER_DISPATCH_CHUNK_READER_H_

#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/merkle_params.h"
#include "server/dispatch/read_job.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// Implementations are thread-safe.
class ChunkReader {
 public:
  using Done = absl::AnyInvocable<void(absl::Status) &&>;

  virtual ~ChunkReader() = default;

  // Called once when `job` starts, before its first chunk.
  virtual void Begin(const ReadJob& job) = 0;

  // Fills job->chunk() for the blocks StartChunk() chose, then calls `done`:
  // before returning, or later on another thread. `job` must stay alive until
  // `done` runs.
  virtual void Read(ReadJob* job, Done done) = 0;

  // The bytes of tree block `id` to send along, which a verifying reader has
  // verified while reading the chunks that need it.
  virtual absl::StatusOr<std::string> TreeBlock(const VerifiedBlob& blob,
                                                TreeBlockId id) const = 0;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_DISPATCH_CHUNK_READER_H_
