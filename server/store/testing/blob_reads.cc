// Implements ReadBlobPart.

#include "server/store/testing/blob_reads.h"

#include <cstring>
#include <optional>
#include <utility>

#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/tree/read_plan.h"

namespace verity::server {

Buffer BufferOf(absl::string_view bytes) {
  Buffer buffer = Buffer::Allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

std::string StringOf(const Buffer& buffer) {
  return std::string(reinterpret_cast<const char*>(buffer.data()),
                     buffer.size());
}

absl::StatusOr<std::string> ReadBlobPart(const Blob& blob, BlobPart part,
                                         uint64_t offset, uint64_t length) {
  if (absl::Status range = CheckReadRange(blob, part, offset, length);
      !range.ok()) {
    return range;
  }
  std::string bytes(length, '\0');
  RETURN_IF_ERROR(ReadAndWait(blob, part, offset, AsMutableBytes(&bytes)));
  return bytes;
}

absl::Status ReadVerified(VerifiedBlob& blob, uint64_t first_block,
                          uint64_t end_block, std::string* out) {
  out->clear();
  const TreeGeometry& geometry = blob.geometry();
  const uint64_t bs = geometry.block_size();
  const ByteRange bytes = BytesOf(geometry, {first_block, end_block});
  ASSIGN_OR_RETURN(std::string data, ReadBlobPart(blob.blob(), BlobPart::kData,
                                                  bytes.begin, bytes.size()));
  for (const TreeBlockId& id : blob.MissingTree(first_block, end_block)) {
    ASSIGN_OR_RETURN(const std::string block,
                     ReadBlobPart(blob.blob(), BlobPart::kTree,
                                  geometry.Ordinal(id) * bs, bs));
    RETURN_IF_ERROR(blob.AddTreeBlock(id, AsBytes(block)));
  }
  uint64_t next = first_block;
  RETURN_IF_ERROR(
      blob.VerifyData(first_block, AsBytes(data), &next, end_block));
  *out = std::move(data);
  return absl::OkStatus();
}

}  // namespace verity::server
