// Implements the statement helpers on lib's SignNameStatement.

#include "client/testing/name_statements.h"

#include "gtest/gtest.h"

namespace verity::client {

std::string SignTestStatement(
    const TestClaim& claim, const std::vector<const Ed25519PrivateKey*>& keys) {
  NameClaim signed_claim;
  signed_claim.name = claim.name;
  signed_claim.digest = claim.digest;
  signed_claim.version = claim.version;
  signed_claim.issued = claim.issued;
  signed_claim.expires = claim.issued + claim.valid_for;
  absl::StatusOr<std::string> encoded = SignNameStatement(signed_claim, keys);
  EXPECT_TRUE(encoded.ok()) << encoded.status();
  return encoded.ok() ? *encoded : "";
}

NameStatement ParseTestStatement(absl::string_view encoded) {
  absl::StatusOr<NameStatement> statement = ParseNameStatement(encoded);
  EXPECT_TRUE(statement.ok()) << statement.status();
  return statement.ok() ? *std::move(statement) : NameStatement();
}

std::string PublicPem(const std::vector<const Ed25519PrivateKey*>& keys) {
  std::string pem;
  for (const Ed25519PrivateKey* key : keys) pem += key->public_key().ToPem();
  return pem;
}

}  // namespace verity::client
