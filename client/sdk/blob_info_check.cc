// Implements CheckBlobInfo by recomputing the digest from the descriptor.

#include "client/sdk/blob_info_check.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "proto/convert.h"

namespace verity::client {

absl::StatusOr<CheckedBlobInfo> CheckBlobInfo(const verity::v1::BlobInfo& info,
                                              const ParsedDigest* expected) {
  CheckedBlobInfo checked;
  absl::StatusOr<ParsedDigest> digest = ParseDigest(info.digest());
  if (!digest.ok()) {
    return absl::DataLossError(absl::StrCat("the server reported digest '",
                                            info.digest(),
                                            "': ", digest.status().message()));
  }
  checked.digest = *std::move(digest);
  ASSIGN_OR_RETURN(checked.descriptor, DescriptorOf(info));
  absl::StatusOr<std::string> computed = checked.descriptor.ComputeFileDigest();
  if (!computed.ok() ||
      checked.descriptor.hash_algorithm != checked.digest.algorithm ||
      *computed != checked.digest.digest) {
    return absl::DataLossError(absl::StrCat(
        "the descriptor the server reported does not hash to ", info.digest()));
  }
  if (expected != nullptr && (expected->algorithm != checked.digest.algorithm ||
                              expected->digest != checked.digest.digest)) {
    return absl::DataLossError(absl::StrCat(
        "the server reported ", info.digest(), ", not ", expected->ToString()));
  }
  return checked;
}

}  // namespace verity::client
