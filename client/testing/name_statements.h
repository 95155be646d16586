// Test support: signed name statements made with lib's signer, for tests of
// the SDK's and the CLI's name checks.

#ifndef VERITYD_CLIENT_TESTING_NAME_STATEMENTS_H_
#define VERITYD_CLIENT_TESTING_NAME_STATEMENTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/tree/descriptor.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"

namespace verity::client {

// What to sign. Plain value; valid from a minute ago for a day by default.
struct TestClaim {
  std::string name;
  ParsedDigest digest;
  uint64_t version = 1;
  absl::Time issued = absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now())) -
                      absl::Minutes(1);
  absl::Duration valid_for = absl::Hours(24);
};

// The encoded statement of `claim`, signed by every key of `keys`; fails the
// test (and returns "") if signing fails.
std::string SignTestStatement(
    const TestClaim& claim, const std::vector<const Ed25519PrivateKey*>& keys);

// The same, parsed.
NameStatement ParseTestStatement(absl::string_view encoded);

// The public keys' PEM blocks, concatenated: a trusted-keys file's text.
std::string PublicPem(const std::vector<const Ed25519PrivateKey*>& keys);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_TESTING_NAME_STATEMENTS_H_
