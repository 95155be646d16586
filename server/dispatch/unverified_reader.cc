// Implements UnverifiedReader: loads, and nothing else.

#include "server/dispatch/unverified_reader.h"

#include <utility>

#include "lib/hash/hash.h"

namespace verity::server {

std::optional<absl::Status> UnverifiedReader::TryReadNow(ReadJob& job) {
  return job.chunk()->TryLoadNow();
}

void UnverifiedReader::ReadLater(std::shared_ptr<ReadJob> job, Done done) {
  // The chunk holds itself, the job is held here, until the fetch is in.
  std::shared_ptr<Chunk> chunk = job->chunk();
  chunk->FetchLater([job = std::move(job),
                     done = std::move(done)](absl::Status status) mutable {
    std::move(done)(std::move(status));
  });
}

absl::StatusOr<std::string> UnverifiedReader::TreeBlock(
    const VerifiedBlob& blob, TreeBlockId id) const {
  const TreeGeometry& geometry = blob.geometry();
  std::string block(geometry.block_size(), '\0');
  std::optional<absl::Status> read = blob.blob().TryReadNow(
      BlobPart::kTree, geometry.Ordinal(id) * geometry.block_size(),
      AsMutableBytes(&block));
  if (!read.has_value()) {
    return absl::FailedPreconditionError(
        "--verify_on_read=false sends only tree blocks the store has here");
  }
  if (!read->ok()) return *read;
  return block;
}

}  // namespace verity::server
