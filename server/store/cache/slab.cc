// Implements SlabKey.

#include "server/store/cache/slab.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace verity::server {

std::string SlabKey::ToString() const {
  return absl::StrCat(absl::StrReplaceAll(digest.ToString(), {{":", "-"}}),
                      part == BlobPart::kData ? ".data." : ".tree.", index);
}

}  // namespace verity::server
