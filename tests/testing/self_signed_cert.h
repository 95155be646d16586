// Test-only: a self-signed TLS certificate for 127.0.0.1 and localhost, made
// with BoringSSL at test time so no key material is committed.
#ifndef VERITYD_TESTS_TESTING_SELF_SIGNED_CERT_H_
#define VERITYD_TESTS_TESTING_SELF_SIGNED_CERT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::testing {

struct PemKeyPair {
  std::string cert_pem;
  std::string key_pem;
};

// An ECDSA P-256 certificate valid for a day, with subjectAltName DNS:localhost
// and IP:127.0.0.1, marked as a CA so it can serve as its own trust root.
absl::StatusOr<PemKeyPair> MakeSelfSignedCert(absl::string_view common_name);

}  // namespace verity::testing

#endif  // VERITYD_TESTS_TESTING_SELF_SIGNED_CERT_H_
