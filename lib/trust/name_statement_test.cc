#include "lib/trust/name_statement.h"

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"

namespace verity {
namespace {

using ::testing::HasSubstr;

const absl::Time kIssued = absl::FromUnixSeconds(1'800'000'000);

// Made by tests/fuzz/make_corpus.py with Python's `cryptography` from the
// layout in docs/protocol.md: "model/latest", version 7, issued 1.8e9 - 60,
// expiring a day after 1.8e9, SHA-256 of the name as digest, signed by the
// key of seed 'a' x 32. Another implementation's statement must verify: in
// version 2, meaning a tree, and in version 1 (no kind: a file).
constexpr char kForeignTreeStatementHex[] =
    "76657269747964206e616d652073746174656d656e742076320a070000000000"
    "0000c4d1496b0000000080234b6b0000000002012794a83410deb6097c0e0a8b"
    "29083656247ca14cc283f9a3d40472e1c40fee2b0c006d6f64656c2f6c617465"
    "737401af9073360066253d1d3c7f62a142eeff25d4bb70628b6056145fc87908"
    "4a265585a5173e98a7e06c46fb63035e608dc1dfa5bad031e7ecd297f2934735"
    "06501d984a60ca484a7c1e3add6125e1c09d9c205b4dbfe2a2d202e24ffd4f01"
    "746b01";
constexpr char kForeignStatementV1Hex[] =
    "76657269747964206e616d652073746174656d656e742076310a070000000000"
    "0000c4d1496b0000000080234b6b00000000012794a83410deb6097c0e0a8b29"
    "083656247ca14cc283f9a3d40472e1c40fee2b0c006d6f64656c2f6c61746573"
    "7401af9073360066253d1d3c7f62a142eeff25d4bb70628b6056145fc879084a"
    "2655fe1158d626bb632fc56f8e376492e5d18ea9bc15fa13f222b012108a5e17"
    "15857b15c7039b0b182eaad4408697dc1f9526024c42d78955170a65950ba2a8"
    "bd0e";

NameClaim ClaimFor(absl::string_view name, uint64_t version = 7) {
  NameClaim claim;
  claim.name = std::string(name);
  claim.digest.algorithm = HashAlgorithm::kSha256;
  claim.digest.digest = ComputeHash(HashAlgorithm::kSha256, AsBytes(name));
  claim.version = version;
  claim.issued = kIssued;
  claim.expires = kIssued + absl::Hours(24);
  return claim;
}

class NameStatementTest : public ::testing::Test {
 protected:
  std::string Sign(const NameClaim& claim,
                   std::vector<const Ed25519PrivateKey*> keys) {
    absl::StatusOr<std::string> signed_statement =
        SignNameStatement(claim, keys);
    EXPECT_TRUE(signed_statement.ok()) << signed_statement.status();
    return signed_statement.value_or("");
  }
  NameStatement Parse(absl::string_view encoded) {
    absl::StatusOr<NameStatement> statement = ParseNameStatement(encoded);
    EXPECT_TRUE(statement.ok()) << statement.status();
    return statement.value_or(NameStatement{});
  }
  TrustedKeys Trust(std::vector<const Ed25519PrivateKey*> keys,
                    int threshold = 1) {
    std::vector<Ed25519PublicKey> public_keys;
    for (const Ed25519PrivateKey* key : keys) {
      public_keys.push_back(key->public_key());
    }
    return TrustedKeys::Create(public_keys, threshold).value();
  }
  absl::Status Check(absl::string_view encoded, const TrustedKeys& keys,
                     absl::string_view name = "model/latest",
                     absl::Time now = kIssued + absl::Hours(1)) {
    absl::StatusOr<NameStatement> statement = ParseNameStatement(encoded);
    if (!statement.ok()) return statement.status();
    return CheckNameStatement(*statement, keys, name, now);
  }

  const Ed25519PrivateKey a_ = Ed25519PrivateKey::Generate();
  const Ed25519PrivateKey b_ = Ed25519PrivateKey::Generate();
  const Ed25519PrivateKey c_ = Ed25519PrivateKey::Generate();
};

TEST_F(NameStatementTest, RoundTripsEveryField) {
  const NameClaim claim = ClaimFor("model/latest");
  const std::string encoded = Sign(claim, {&a_, &b_});
  const NameStatement statement = Parse(encoded);
  EXPECT_EQ(statement.claim.name, claim.name);
  EXPECT_EQ(statement.claim.digest, claim.digest);
  EXPECT_EQ(statement.claim.version, 7u);
  EXPECT_EQ(statement.claim.issued, claim.issued);
  EXPECT_EQ(statement.claim.expires, claim.expires);
  ASSERT_EQ(statement.signers.size(), 2u);
  EXPECT_EQ(statement.signers[0], a_.public_key().id());
  EXPECT_EQ(statement.signers[1], b_.public_key().id());
  EXPECT_EQ(statement.encoded, encoded);
  EXPECT_EQ(statement.body.size() + 2 * kEd25519SignatureSize, encoded.size());
  EXPECT_EQ(encoded.substr(0, kNameStatementMagic.size()), kNameStatementMagic);
  EXPECT_TRUE(Check(encoded, Trust({&a_})).ok());
}

TEST_F(NameStatementTest, HasTheDocumentedLayout) {
  // docs/protocol.md: magic, u64 version, issued, expires, u8 kind, u8
  // algorithm, digest, u16 name size, name, u8 signers, key ids;
  // little-endian.
  NameClaim claim = ClaimFor("n", 0x0102030405060708);
  claim.kind = NameKind::kTree;
  const NameStatement statement = Parse(Sign(claim, {&a_}));
  EXPECT_EQ(statement.claim.kind, NameKind::kTree);
  std::string expected("verityd name statement v2\n");
  expected += std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8);
  expected += std::string("\x00\xd2\x49\x6b\x00\x00\x00\x00", 8);  // 1.8e9
  expected += std::string("\x80\x23\x4b\x6b\x00\x00\x00\x00", 8);  // + 1 day
  expected += '\x02';                                              // a tree
  expected += '\x01';
  expected += claim.digest.digest;
  expected += std::string("\x01\x00n\x01", 4);
  const KeyId& id = a_.public_key().id();
  expected.append(reinterpret_cast<const char*>(id.data()), id.size());
  EXPECT_EQ(statement.body, expected);
  EXPECT_TRUE(a_.public_key().Verify(expected, statement.signatures[0]));
}

TEST_F(NameStatementTest, VerifiesAStatementSignedByAnotherImplementation) {
  const Ed25519PrivateKey key =
      Ed25519PrivateKey::FromSeed(std::string(32, 'a')).value();
  const std::string encoded = absl::HexStringToBytes(kForeignTreeStatementHex);
  const NameStatement statement = Parse(encoded);
  EXPECT_EQ(statement.claim.digest, ClaimFor("model/latest").digest);
  EXPECT_EQ(statement.claim.issued, kIssued - absl::Seconds(60));
  EXPECT_EQ(statement.claim.kind, NameKind::kTree);
  EXPECT_TRUE(Check(encoded, Trust({&key})).ok());
  // And this implementation signs the same bytes (Ed25519 is deterministic).
  NameClaim claim = ClaimFor("model/latest");
  claim.issued = kIssued - absl::Seconds(60);
  claim.kind = NameKind::kTree;
  EXPECT_EQ(Sign(claim, {&key}), encoded);
}

// Statements signed before the kind existed still verify, and mean a file.
TEST_F(NameStatementTest, VersionOneStatementsMeanFiles) {
  const Ed25519PrivateKey key =
      Ed25519PrivateKey::FromSeed(std::string(32, 'a')).value();
  const std::string encoded = absl::HexStringToBytes(kForeignStatementV1Hex);
  const NameStatement statement = Parse(encoded);
  EXPECT_EQ(statement.claim.kind, NameKind::kFile);
  EXPECT_EQ(statement.claim.version, 7u);
  EXPECT_TRUE(Check(encoded, Trust({&key})).ok());
  // A kind that is neither is refused, signed or not.
  NameClaim claim = ClaimFor("model/latest");
  claim.kind = static_cast<NameKind>(3);
  EXPECT_FALSE(SignNameStatement(claim, {&key}).ok());
  std::string bad = Sign(ClaimFor("model/latest"), {&key});
  bad[kNameStatementMagic.size() + 24] = 3;
  EXPECT_THAT(ParseNameStatement(bad).status().message(),
              HasSubstr("unknown kind 3"));
}

TEST_F(NameStatementTest, EveryChangedByteIsRefused) {
  const std::string encoded = Sign(ClaimFor("model/latest"), {&a_});
  const TrustedKeys keys = Trust({&a_});
  for (size_t i = 0; i < encoded.size(); ++i) {
    std::string changed = encoded;
    changed[i] ^= 0x01;
    EXPECT_FALSE(Check(changed, keys).ok()) << "byte " << i;
  }
}

TEST_F(NameStatementTest, TruncatedOrExtendedIsMalformed) {
  const std::string encoded = Sign(ClaimFor("model/latest"), {&a_, &b_});
  for (size_t size = 0; size < encoded.size(); ++size) {
    absl::StatusOr<NameStatement> parsed =
        ParseNameStatement(encoded.substr(0, size));
    ASSERT_FALSE(parsed.ok()) << size;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()),
                HasSubstr("malformed name statement"));
  }
  absl::StatusOr<NameStatement> extended = ParseNameStatement(encoded + "x");
  ASSERT_FALSE(extended.ok());
  EXPECT_THAT(std::string(extended.status().message()),
              HasSubstr("bytes follow the last signature"));
}

TEST_F(NameStatementTest, SignedByAnotherStatementIsRefused) {
  // A signature moved from another statement does not verify.
  const NameStatement one = Parse(Sign(ClaimFor("model/latest", 1), {&a_}));
  const NameStatement two = Parse(Sign(ClaimFor("model/latest", 2), {&a_}));
  const std::string mixed = two.body + one.signatures[0];
  EXPECT_THAT(std::string(Check(mixed, Trust({&a_})).message()),
              HasSubstr("0 valid signatures by trusted keys, 1 needed (1 by "
                        "trusted keys do not verify"));
}

TEST_F(NameStatementTest, ChecksTheNameExactly) {
  const std::string encoded = Sign(ClaimFor("model/latest"), {&a_});
  EXPECT_THAT(
      std::string(Check(encoded, Trust({&a_}), "model/latest2").message()),
      HasSubstr("a name statement for \"model/latest\" was given for "
                "\"model/latest2\""));
  EXPECT_FALSE(Check(encoded, Trust({&a_}), "model/").ok());
}

TEST_F(NameStatementTest, ChecksExpiryAndIssueWithTheClockSkewAllowance) {
  const NameClaim claim = ClaimFor("model/latest");
  const std::string encoded = Sign(claim, {&a_});
  const TrustedKeys keys = Trust({&a_});
  const absl::Duration skew = kNameStatementClockSkew;
  EXPECT_TRUE(
      Check(encoded, keys, claim.name, claim.expires + skew - absl::Seconds(1))
          .ok());
  EXPECT_THAT(
      std::string(
          Check(encoded, keys, claim.name, claim.expires + skew).message()),
      HasSubstr("expired at"));
  EXPECT_TRUE(Check(encoded, keys, claim.name, claim.issued - skew).ok());
  EXPECT_THAT(std::string(Check(encoded, keys, claim.name,
                                claim.issued - skew - absl::Seconds(1))
                              .message()),
              HasSubstr("is issued in the future"));
}

TEST_F(NameStatementTest, NeedsTheThresholdOfDistinctTrustedKeys) {
  const std::string by_a = Sign(ClaimFor("model/latest"), {&a_});
  const std::string by_a_c = Sign(ClaimFor("model/latest"), {&a_, &c_});
  const std::string by_a_b = Sign(ClaimFor("model/latest"), {&b_, &a_});
  const TrustedKeys two_of_ab = Trust({&a_, &b_}, 2);
  EXPECT_TRUE(Check(by_a_b, two_of_ab).ok());
  EXPECT_THAT(std::string(Check(by_a, two_of_ab).message()),
              HasSubstr("has 1 valid signatures by trusted keys, 2 needed"));
  EXPECT_THAT(std::string(Check(by_a_c, two_of_ab).message()),
              HasSubstr("1 by keys not trusted"));
  EXPECT_FALSE(Check(by_a, Trust({&b_})).ok());
}

TEST_F(NameStatementTest, RotationIsListingKeys) {
  const std::string by_old = Sign(ClaimFor("model/latest"), {&a_});
  const std::string by_new = Sign(ClaimFor("model/latest"), {&b_});
  const TrustedKeys during = Trust({&a_, &b_});
  const TrustedKeys after = Trust({&b_});
  EXPECT_TRUE(Check(by_old, during).ok());
  EXPECT_TRUE(Check(by_new, during).ok());
  EXPECT_TRUE(Check(by_new, after).ok());
  EXPECT_FALSE(Check(by_old, after).ok());
}

TEST_F(NameStatementTest, RefusesRollbackAndASwapAtTheSameVersion) {
  const NameStatement v7 = Parse(Sign(ClaimFor("model/latest", 7), {&a_}));
  const NameStatement v8 = Parse(Sign(ClaimFor("model/latest", 8), {&a_}));
  NameClaim other = ClaimFor("model/latest", 7);
  other.digest.digest[0] ^= 1;
  const NameStatement v7_other = Parse(Sign(other, {&a_}));
  const SeenName seen = SeenNameOf(v7);
  EXPECT_TRUE(CheckNotRolledBack(seen, v7).ok());
  EXPECT_TRUE(CheckNotRolledBack(seen, v8).ok());
  EXPECT_THAT(std::string(CheckNotRolledBack(SeenNameOf(v8), v7).message()),
              HasSubstr("older than version 8"));
  absl::Status swapped = CheckNotRolledBack(seen, v7_other);
  EXPECT_EQ(swapped.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(swapped.message()),
              HasSubstr("differs from the statement of the same version"));
  EXPECT_TRUE(CheckSupersedes(v7, v8).ok());
  EXPECT_EQ(CheckSupersedes(v7, v7).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CheckSupersedes(v8, v7).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(NameStatementTest, TrustedSignersAreTheKeysWhoseSignaturesVerify) {
  const NameStatement by_a_c =
      Parse(Sign(ClaimFor("model/latest"), {&a_, &c_}));
  const std::vector<KeyId> signers = TrustedSigners(by_a_c, Trust({&a_, &b_}));
  ASSERT_EQ(signers.size(), 1u);
  EXPECT_EQ(signers[0], a_.public_key().id());
  NameStatement flipped = by_a_c;
  for (std::string& signature : flipped.signatures) signature[0] ^= 1;
  EXPECT_TRUE(TrustedSigners(flipped, Trust({&a_, &b_})).empty());
  // Signed, whatever the time: an expired statement still counts as a floor.
  EXPECT_TRUE(
      CheckNameStatementSigned(by_a_c, Trust({&a_}), "model/latest").ok());
  EXPECT_FALSE(CheckNameStatementSigned(by_a_c, Trust({&a_}), "model").ok());
  EXPECT_FALSE(
      CheckNameStatementSigned(flipped, Trust({&a_}), "model/latest").ok());
}

TEST_F(NameStatementTest, NextVersionIsAboveEverythingKnownAndTime) {
  const absl::Time now = absl::FromUnixMillis(1'800'000'000'123);
  EXPECT_EQ(NextNameVersion(std::nullopt, 0, now).value(), 1'800'000'000'123u);
  EXPECT_EQ(NextNameVersion(std::nullopt, 5, now).value(), 1'800'000'000'123u);
  EXPECT_EQ(NextNameVersion(std::nullopt, 1'900'000'000'000, now).value(),
            1'900'000'000'001u);
  EXPECT_EQ(NextNameVersion(std::nullopt, 0, absl::UnixEpoch() - absl::Hours(1))
                .value(),
            1u);
  EXPECT_EQ(NextNameVersion(std::nullopt, UINT64_MAX, now).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(NextNameVersion(9, 8, now).value(), 9u);
  for (const uint64_t known : {9, 10}) {
    const absl::Status below = NextNameVersion(9, known, now).status();
    EXPECT_EQ(below.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(std::string(below.message()), HasSubstr("not above version"));
  }
}

TEST_F(NameStatementTest, RefusesToSignWhatCannotBeParsed) {
  NameClaim claim = ClaimFor("model/latest");
  EXPECT_FALSE(SignNameStatement(claim, {}).ok());
  EXPECT_FALSE(SignNameStatement(claim, {&a_, &a_}).ok());
  claim.expires = claim.issued;
  EXPECT_FALSE(SignNameStatement(claim, {&a_}).ok());
  claim = ClaimFor("");
  EXPECT_FALSE(SignNameStatement(claim, {&a_}).ok());
  claim = ClaimFor(std::string(kMaxStatementNameSize + 1, 'n'));
  EXPECT_FALSE(SignNameStatement(claim, {&a_}).ok());
  claim = ClaimFor("model/latest");
  claim.digest.digest.pop_back();
  EXPECT_FALSE(SignNameStatement(claim, {&a_}).ok());
  claim = ClaimFor(std::string(kMaxStatementNameSize, 'n'));
  claim.digest.algorithm = HashAlgorithm::kSha512;
  claim.digest.digest = std::string(64, 'd');
  std::vector<Ed25519PrivateKey> many;
  for (size_t i = 0; i < kMaxStatementSigners; ++i) {
    many.push_back(Ed25519PrivateKey::Generate());
  }
  std::vector<const Ed25519PrivateKey*> keys;
  for (const Ed25519PrivateKey& key : many) keys.push_back(&key);
  // The largest statement there can be still fits.
  const NameStatement largest = Parse(Sign(claim, keys));
  EXPECT_LE(largest.encoded.size(), kMaxNameStatementSize);
}

TEST_F(NameStatementTest, RefusesRepeatedSignersInTheEncoding) {
  const NameStatement statement =
      Parse(Sign(ClaimFor("model/latest"), {&a_, &b_}));
  // Overwrite b's key id with a's: one key must not count twice.
  std::string encoded = statement.encoded;
  const size_t second_id = statement.body.size() - sizeof(KeyId);
  const KeyId& a_id = a_.public_key().id();
  encoded.replace(second_id, sizeof(KeyId),
                  reinterpret_cast<const char*>(a_id.data()), sizeof(KeyId));
  absl::StatusOr<NameStatement> parsed = ParseNameStatement(encoded);
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("a signer is listed twice"));
}

TEST_F(NameStatementTest, TrustedKeysNeedASensibleThreshold) {
  EXPECT_FALSE(TrustedKeys::Create({}, 1).ok());
  EXPECT_FALSE(TrustedKeys::Create({a_.public_key()}, 0).ok());
  EXPECT_FALSE(TrustedKeys::Create({a_.public_key()}, 2).ok());
  EXPECT_FALSE(TrustedKeys::Create({a_.public_key(), a_.public_key()}, 1).ok());
  absl::StatusOr<TrustedKeys> from_pem = TrustedKeys::FromPem(
      a_.public_key().ToPem() + b_.public_key().ToPem(), 2);
  ASSERT_TRUE(from_pem.ok()) << from_pem.status();
  EXPECT_EQ(from_pem->size(), 2u);
  EXPECT_NE(from_pem->Find(b_.public_key().id()), nullptr);
  EXPECT_EQ(from_pem->Find(c_.public_key().id()), nullptr);
}

}  // namespace
}  // namespace verity
