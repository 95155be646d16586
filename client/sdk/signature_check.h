// The client's check of fs-verity built-in signatures: with pinned
// certificates, a blob is read only if its detached signature (as `fsverity
// sign` makes it) verifies for the digest being fetched.

#ifndef VERITYD_CLIENT_SDK_SIGNATURE_CHECK_H_
#define VERITYD_CLIENT_SDK_SIGNATURE_CHECK_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/descriptor.h"
#include "lib/trust/fsverity_signature.h"
#include "verity/options.h"

namespace verity::client {

// Thread-safe: immutable, and the certificates may be shared by threads.
class SignatureCheck {
 public:
  // Null when options.fsverity_certs is empty. INVALID_ARGUMENT if the PEM
  // holds no certificate or one that does not parse; FAILED_PRECONDITION if
  // OpenSSL 3 cannot be loaded.
  static absl::StatusOr<std::unique_ptr<SignatureCheck>> Create(
      const sdk::ClientOptions& options);

  explicit SignatureCheck(FsverityCertificates certs)
      : certs_(std::move(certs)) {}

  // DATA_LOSS naming the blob if `signature` is empty or does not verify for
  // `digest` with a pinned certificate.
  absl::Status Check(const ParsedDigest& digest,
                     absl::string_view signature) const;

 private:
  const FsverityCertificates certs_;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_SIGNATURE_CHECK_H_
