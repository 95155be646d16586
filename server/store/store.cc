// Implements the Blob base and ReadLocal.

#include "server/store/store.h"

#include <optional>
#include <utility>

namespace verity::server {

Blob::Blob(const ParsedDigest& digest, const Descriptor& descriptor,
           const MerkleParams& params, const TreeGeometry& geometry)
    : digest_(digest),
      digest_text_(digest.ToString()),
      descriptor_(descriptor),
      params_(params),
      geometry_(geometry) {}

absl::Status ReadLocal(const Blob& blob, BlobPart part, uint64_t offset,
                       absl::Span<uint8_t> out) {
  if (!blob.IsLocal(part, offset, out.size())) {
    return absl::FailedPreconditionError(
        "a local read of a range the store does not hold locally");
  }
  std::optional<absl::Status> result;
  blob.Read(part, offset, out,
            [&result](absl::Status status) { result = std::move(status); });
  if (!result.has_value()) {
    return absl::InternalError("a local read did not complete at once");
  }
  return *result;
}

}  // namespace verity::server
