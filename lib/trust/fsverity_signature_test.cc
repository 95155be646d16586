// Unit tests of fsverity_signature that need no external tool; the oracle
// tests against `fsverity sign` are in fsverity_signature_oracle_test.cc.

#include "lib/trust/fsverity_signature.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"

namespace verity {
namespace {

using ::testing::HasSubstr;

// The first 144 bytes of a certificate: valid PEM and base64, but not a
// whole X.509 structure. (Real certificates are made at test time by the
// oracle test.)
constexpr char kTruncatedCertificatePem[] = R"(-----BEGIN CERTIFICATE-----
MIIBcjCCARmgAwIBAgIULtw7kI8IbcgNICc1cVUTsh9UG8UwCgYIKoZIzj0EAwIw
DzENMAsGA1UEAwwEdW5pdDAeFw0yNjEyMDIwOTEyMzBaFw0yNjEyMDMwOTEyMzBa
MA8xDTALBgNVBAMMBHVuaXQwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAT8/Q5E
-----END CERTIFICATE-----
)";

// Hand-made DER ContentInfos: a SignedData with no signer, detached or
// carrying the content "x". Version 1, no digest algorithms, no certificates.
constexpr char kNoSignerDetachedHex[] =
    "3023"                    // ContentInfo
    "06092a864886f70d010702"  // signedData
    "a016"
    "3014"                        // SignedData
    "020101"                      // version 1
    "3100"                        // digestAlgorithms {}
    "300b06092a864886f70d010701"  // contentInfo { data }, no content
    "3100";                       // signerInfos {}
constexpr char kNoSignerAttachedHex[] =
    "3028"
    "06092a864886f70d010702"
    "a01b"
    "3019"
    "020101"
    "3100"
    "3010"
    "06092a864886f70d010701"
    "a003040178"  // [0] { OCTET STRING "x" }
    "3100";

TEST(FormattedDigestTest, Sha256Layout) {
  ParsedDigest digest{HashAlgorithm::kSha256, std::string(32, '\xab')};
  const std::string message = FormattedDigest(digest);
  ASSERT_EQ(message.size(), 8u + 2 + 2 + 32);
  EXPECT_EQ(message.substr(0, 8), "FSVerity");
  EXPECT_EQ(message.substr(8, 4), std::string("\x01\x00\x20\x00", 4));
  EXPECT_EQ(message.substr(12), digest.digest);
}

TEST(FormattedDigestTest, Sha512Layout) {
  ParsedDigest digest{HashAlgorithm::kSha512, std::string(64, '\x5c')};
  const std::string message = FormattedDigest(digest);
  ASSERT_EQ(message.size(), 8u + 2 + 2 + 64);
  EXPECT_EQ(message.substr(0, 8), "FSVerity");
  EXPECT_EQ(message.substr(8, 4), std::string("\x02\x00\x40\x00", 4));
  EXPECT_EQ(message.substr(12), digest.digest);
}

// The bytes the kernel's fsverity_formatted_digest gives for the digest of
// an empty file (fsverity digest /dev/null prints sha256:3d248ca5...).
TEST(FormattedDigestTest, MatchesAKnownDigestByteForByte) {
  absl::StatusOr<ParsedDigest> digest = ParseDigest(
      "sha256:"
      "3d248ca542a24fc62d1c43b916eae5016878e2533c88238480b26128a1f1af95");
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(absl::BytesToHexString(FormattedDigest(*digest)),
            "4653566572697479"  // "FSVerity"
            "0100"              // le16 FS_VERITY_HASH_ALG_SHA256
            "2000"              // le16 32
            "3d248ca542a24fc62d1c43b916eae5016878e2533c88238480b26128a1f1af95");
}

TEST(FsverityCertificatesTest, RefusesTextWithoutCertificates) {
  absl::StatusOr<FsverityCertificates> certs =
      FsverityCertificates::FromPem("no PEM here\n");
  EXPECT_EQ(certs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(certs.status().message(), HasSubstr("no CERTIFICATE PEM block"));
  EXPECT_EQ(FsverityCertificates::FromPem("").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FsverityCertificatesTest, RefusesACertificateThatDoesNotParse) {
  absl::StatusOr<FsverityCertificates> certs =
      FsverityCertificates::FromPem(kTruncatedCertificatePem);
  EXPECT_EQ(certs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(certs.status().message(),
              HasSubstr("PEM certificate 1 does not parse"));
}

TEST(CheckFsveritySignatureFormatTest, RefusesEmptyGarbageAndOversize) {
  const absl::Status empty = CheckFsveritySignatureFormat("");
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.message(), "fs-verity signature is empty");

  const absl::Status garbage = CheckFsveritySignatureFormat("not DER at all");
  EXPECT_EQ(garbage.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(garbage.message(),
              HasSubstr("fs-verity signature is not a DER PKCS#7 SignedData"));

  const absl::Status big = CheckFsveritySignatureFormat(
      std::string(kMaxFsveritySignatureSize + 1, '\x30'));
  EXPECT_EQ(big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(big.message(), HasSubstr("more than the 16128 fs-verity allows"));
}

// A DER SEQUENCE holding only the OID of PKCS#7 "data": a PKCS#7 ContentInfo,
// but not a SignedData.
TEST(CheckFsveritySignatureFormatTest, RefusesAPkcs7ThatIsNotSignedData) {
  const std::string data_content_info =
      absl::HexStringToBytes("300b06092a864886f70d010701");
  const absl::Status status = CheckFsveritySignatureFormat(data_content_info);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "fs-verity signature is a PKCS#7 but not a SignedData");
}

TEST(CheckFsveritySignatureFormatTest, RefusesASignedDataWithoutSigner) {
  const absl::Status status = CheckFsveritySignatureFormat(
      absl::HexStringToBytes(kNoSignerDetachedHex));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "fs-verity signature has 0 signers; exactly one is expected");
}

TEST(CheckFsveritySignatureFormatTest, RefusesASignedDataWithContent) {
  const absl::Status status = CheckFsveritySignatureFormat(
      absl::HexStringToBytes(kNoSignerAttachedHex));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "fs-verity signature is not detached: it carries content");
}

TEST(CheckFsveritySignatureFormatTest, RefusesBytesAfterTheDer) {
  const absl::Status status = CheckFsveritySignatureFormat(
      absl::HexStringToBytes(kNoSignerDetachedHex) + std::string(3, '\0'));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "fs-verity signature has 3 bytes after its DER PKCS#7");
}

}  // namespace
}  // namespace verity
