// Implements BlobRef: digest detection is exactly lib's ParseDigest, so the
// CLI and the server agree on what a digest looks like.

#include "client/names/blob_ref.h"

#include "lib/hash/hash.h"

namespace verity::client {

std::string BlobRef::ToString() const {
  if (!digest.has_value()) return name;
  return digest->ToString();
}

absl::StatusOr<BlobRef> ParseBlobRef(absl::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError("empty blob digest or name");
  }
  BlobRef ref;
  if (absl::StatusOr<ParsedDigest> digest = ParseDigest(text); digest.ok()) {
    ref.digest = *std::move(digest);
  } else {
    ref.name = std::string(text);
  }
  return ref;
}

}  // namespace verity::client
