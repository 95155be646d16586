// What one blob of a BatchRead answer is worth: the client holds no tree for
// a blob it reads whole, so it builds one from the bytes, with the params the
// blob's descriptor gives, and the digest of that tree must be the one it
// trusts. Nothing of a blob that fails reaches the caller.

#ifndef VERITYD_CLIENT_SDK_BATCH_READ_H_
#define VERITYD_CLIENT_SDK_BATCH_READ_H_

#include <string>

#include "absl/status/statusor.h"
#include "client/sdk/signature_check.h"
#include "lib/tree/descriptor.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::client {

// The bytes of `blob`, the answer for `trusted`: the server's error for it,
// or its data once verified (DATA_LOSS naming the blob if its descriptor is
// missing, not for `trusted`, or the data does not hash to it) and, with a
// `signature` check, its fs-verity signature checked. Takes the data out of
// `blob`.
absl::StatusOr<std::string> CheckBatchBlob(v1::BatchReadResponse::Blob& blob,
                                           const ParsedDigest& trusted,
                                           const SignatureCheck* signature);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_BATCH_READ_H_
