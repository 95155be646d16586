// Implements UnverifiedReader: loads, and nothing else.

#include "server/dispatch/unverified_reader.h"

#include <utility>

#include "lib/hash.h"
#include "lib/status_macros.h"

namespace verity::server {

void UnverifiedReader::Read(ReadJob* job, Done done) {
  const BlockRange blocks = job->chunk_blocks();
  std::move(done)(job->blob().Load(blocks.first, blocks.end, &job->chunk()));
}

absl::StatusOr<std::string> UnverifiedReader::TreeBlock(
    const VerifiedBlob& blob, TreeBlockId id) const {
  const TreeGeometry& geometry = blob.geometry();
  std::string block(geometry.block_size(), '\0');
  RETURN_IF_ERROR(ReadLocal(blob.blob(), BlobPart::kTree,
                            geometry.Ordinal(id) * geometry.block_size(),
                            AsMutableBytes(&block)));
  return block;
}

}  // namespace verity::server
