// Consistency checks on the BlobInfo a server reports, so that stat, ls and
// put never print a digest its own descriptor contradicts.

#ifndef VERITYD_CLIENT_SDK_BLOB_INFO_CHECK_H_
#define VERITYD_CLIENT_SDK_BLOB_INFO_CHECK_H_

#include "absl/status/statusor.h"
#include "lib/tree/descriptor.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::client {

// The verified facts of a BlobInfo. Plain value.
struct CheckedBlobInfo {
  ParsedDigest digest;
  Descriptor descriptor;
};

// DATA_LOSS unless `info.digest` parses, the descriptor hashes to it, and,
// when `expected` is given, it is that digest. This proves only that the
// server's answer is self-consistent (and for `expected`, about the right
// blob), not that it stores the content.
absl::StatusOr<CheckedBlobInfo> CheckBlobInfo(
    const verity::v1::BlobInfo& info, const ParsedDigest* expected = nullptr);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_BLOB_INFO_CHECK_H_
