// PKCS#7 SignedData verification by the system's OpenSSL 3, reached only
// through dlopen/dlvsym so that it cannot mix with the static BoringSSL that
// every verityd binary links (see openssl3_pkcs7.cc). No OpenSSL type
// appears here: callers need not, and must not, include OpenSSL's headers.

#ifndef VERITYD_LIB_TRUST_OPENSSL3_PKCS7_H_
#define VERITYD_LIB_TRUST_OPENSSL3_PKCS7_H_

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity {

// X.509 certificates as OpenSSL 3 objects. Immutable once made; concurrent
// verifications may share one. Owns its certificates.
class Openssl3Certificates {
 public:
  // Every "CERTIFICATE" PEM block in `pem` (text between blocks is ignored).
  // INVALID_ARGUMENT if there is none or one does not parse;
  // FAILED_PRECONDITION if libcrypto.so.3 cannot be loaded.
  static absl::StatusOr<std::shared_ptr<const Openssl3Certificates>> FromPem(
      absl::string_view pem);

  Openssl3Certificates(const Openssl3Certificates&) = delete;
  Openssl3Certificates& operator=(const Openssl3Certificates&) = delete;
  ~Openssl3Certificates();

  size_t size() const { return size_; }

 private:
  friend absl::Status VerifyDetachedPkcs7(absl::string_view, absl::string_view,
                                          const Openssl3Certificates&);

  Openssl3Certificates(void* stack, size_t size) : stack_(stack), size_(size) {}

  void* stack_;  // the STACK_OF(X509) that owns the certificates
  size_t size_;
};

// Checks that `der` is exactly one DER PKCS#7 SignedData (no trailing
// bytes) that is detached (carries no content) and has exactly one signer.
// INVALID_ARGUMENT otherwise, with a message that completes "signature ...";
// FAILED_PRECONDITION if libcrypto.so.3 cannot be loaded.
absl::Status CheckDetachedPkcs7(absl::string_view der);

// OK iff `der` passes CheckDetachedPkcs7 and its signer's signature over
// `content` verifies with one of `pinned`, the signer being looked up among
// them by issuer and serial number (certificates inside `der` are ignored,
// and no chain is checked: a pinned certificate is the trust decision).
// Otherwise INVALID_ARGUMENT as CheckDetachedPkcs7, or DATA_LOSS when the
// signer is not pinned or the signature does not verify, each with a message
// that completes "signature ..."; FAILED_PRECONDITION as above.
absl::Status VerifyDetachedPkcs7(absl::string_view der,
                                 absl::string_view content,
                                 const Openssl3Certificates& pinned);

}  // namespace verity

#endif  // VERITYD_LIB_TRUST_OPENSSL3_PKCS7_H_
