// Test support: keys and self-signed certificates made by openssl, and
// detached fs-verity signatures of test blobs made by `fsverity sign`.

#ifndef VERITYD_CLIENT_TESTING_FSVERITY_SIGNER_H_
#define VERITYD_CLIENT_TESTING_FSVERITY_SIGNER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/merkle_params.h"

namespace verity::client {

// An ECDSA P-256 key and its certificate, as files, and the certificate's
// PEM text (what a client pins). Plain value.
struct FsveritySigner {
  std::string key_path;
  std::string cert_path;
  std::string cert_pem;
};

// Makes one in the test's temporary directory; `name` keeps files apart and
// `serial` certificates.
absl::StatusOr<FsveritySigner> MakeFsveritySigner(absl::string_view name,
                                                  int serial);

// `fsverity sign`'s signature of `blob`, made with `params` (no salt).
absl::StatusOr<std::string> FsveritySign(const FsveritySigner& signer,
                                         const TestBlob& blob,
                                         const MerkleParams& params);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_TESTING_FSVERITY_SIGNER_H_
