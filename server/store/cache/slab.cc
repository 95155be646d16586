// Implements SlabKey.

#include "server/store/cache/slab.h"

#include "absl/strings/str_cat.h"

namespace verity::server {

std::string SlabKey::ToString() const {
  return absl::StrCat(DigestFileName(digest.ToString()),
                      part == BlobPart::kData ? ".data." : ".tree.", index);
}

}  // namespace verity::server
