// fs-verity built-in signatures as `fsverity sign` makes them: a detached
// PKCS#7 SignedData over the formatted digest, checked against certificates
// a client pins; and dm-verity's root hash signatures (systemd's
// roothash.p7s), the same PKCS#7 over the root hash in hex. The PKCS#7 work
// is OpenSSL 3's (lib/trust/openssl3_pkcs7.h).

#ifndef VERITYD_LIB_TRUST_FSVERITY_SIGNATURE_H_
#define VERITYD_LIB_TRUST_FSVERITY_SIGNATURE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/descriptor.h"
#include "lib/trust/openssl3_pkcs7.h"

namespace verity {

// The kernel's limit (FS_VERITY_MAX_SIGNATURE_SIZE: a 16 KiB descriptor less
// its 256 fixed bytes); a larger signature could never enable fs-verity.
inline constexpr size_t kMaxFsveritySignatureSize = 16384 - kDescriptorSize;

// The message fs-verity signs (struct fsverity_formatted_digest):
// "FSVerity" || le16 algorithm || le16 digest size || digest.
std::string FormattedDigest(const ParsedDigest& digest);

// The certificates whose signatures a client accepts. Immutable; copies
// share the certificates, and any number of threads may verify with one.
class FsverityCertificates {
 public:
  // Every "CERTIFICATE" PEM block in `pem` (other text and blocks are
  // ignored). INVALID_ARGUMENT if there is none or one does not parse;
  // FAILED_PRECONDITION if OpenSSL 3 (libcrypto.so.3) cannot be loaded.
  static absl::StatusOr<FsverityCertificates> FromPem(absl::string_view pem);

  size_t size() const { return certs_->size(); }

 private:
  friend absl::Status VerifyFsveritySignature(const ParsedDigest&,
                                              absl::string_view,
                                              const FsverityCertificates&);
  friend absl::Status VerifyRootHashSignature(absl::string_view,
                                              absl::string_view,
                                              const FsverityCertificates&);

  explicit FsverityCertificates(
      std::shared_ptr<const Openssl3Certificates> certs)
      : certs_(std::move(certs)) {}

  std::shared_ptr<const Openssl3Certificates> certs_;  // never null
};

// OK iff `der_signature` is a DER PKCS#7 SignedData, detached, with exactly
// one signer, whose signature over FormattedDigest(digest) verifies with one
// of `pinned` (the signer is found among them by issuer and serial number,
// since `fsverity sign` puts no certificate in the signature; no chain is
// checked, as a pinned certificate is itself the trust decision).
// DATA_LOSS saying why otherwise; INVALID_ARGUMENT if `digest` is not a
// well-formed digest; FAILED_PRECONDITION if libcrypto.so.3 cannot be loaded.
absl::Status VerifyFsveritySignature(const ParsedDigest& digest,
                                     absl::string_view der_signature,
                                     const FsverityCertificates& pinned);

// The same for a dm-verity root hash signature, as systemd's roothash.p7s
// (RootHashSignature=) and the kernel's dm-verity (root_hash_sig_key_desc)
// take it: the signed content is `root_hash` (raw bytes) in lowercase hex,
// with no newline. DATA_LOSS saying why unless it verifies with one of
// `pinned`; INVALID_ARGUMENT for an empty root hash.
absl::Status VerifyRootHashSignature(absl::string_view root_hash,
                                     absl::string_view der_signature,
                                     const FsverityCertificates& pinned);

// The cheap structural check a server makes before storing a signature it
// cannot verify: at most kMaxFsveritySignatureSize bytes of DER PKCS#7
// SignedData, detached, with one signer. INVALID_ARGUMENT saying why
// otherwise; FAILED_PRECONDITION if libcrypto.so.3 cannot be loaded.
absl::Status CheckFsveritySignatureFormat(absl::string_view der_signature);

}  // namespace verity

#endif  // VERITYD_LIB_TRUST_FSVERITY_SIGNATURE_H_
