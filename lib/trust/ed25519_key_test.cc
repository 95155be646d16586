#include "lib/trust/ed25519_key.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace verity {
namespace {

// RFC 8032, section 7.1, test 1, as `openssl genpkey -algorithm ed25519` and
// `openssl pkey -pubout` write it.
constexpr char kRfcPrivatePem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
    "-----END PRIVATE KEY-----\n";
constexpr char kRfcPublicPem[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
    "-----END PUBLIC KEY-----\n";
constexpr char kRfcPublicHex[] =
    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
constexpr char kRfcEmptySignatureHex[] =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb882"
    "1590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
// sha256sum of the DER SubjectPublicKeyInfo above.
constexpr char kRfcKeyId[] =
    "06e3fd8fda29bb60ab59557de61edb0aecdb231134be30e75b455f8e1b792fa9";
constexpr char kRsaPublicPem[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAO8L5ahqt6pKiN5G3scCQvnR3n6YXLQc\n"
    "lZ3p49P0E1KejMChJqvYn9ZtVDO5g+SgejeHk/oxJyb3pxPAbZ24l/cCAwEAAQ==\n"
    "-----END PUBLIC KEY-----\n";

std::string Hex(absl::string_view bytes) {
  return absl::BytesToHexString(bytes);
}

TEST(Ed25519KeyTest, ReadsOpenSslsPemAndSignsAsRfc8032) {
  absl::StatusOr<Ed25519PrivateKey> key =
      Ed25519PrivateKey::ParsePem(kRfcPrivatePem);
  ASSERT_TRUE(key.ok()) << key.status();
  const auto& raw = key->public_key().raw();
  EXPECT_EQ(Hex(absl::string_view(reinterpret_cast<const char*>(raw.data()),
                                  raw.size())),
            kRfcPublicHex);
  EXPECT_EQ(Hex(key->Sign("")), kRfcEmptySignatureHex);
  EXPECT_EQ(key->ToPem(), kRfcPrivatePem);
  EXPECT_EQ(key->public_key().ToPem(), kRfcPublicPem);
}

TEST(Ed25519KeyTest, KeyIdIsTheSha256OfTheSubjectPublicKeyInfo) {
  absl::StatusOr<std::vector<Ed25519PublicKey>> keys =
      Ed25519PublicKey::ParsePem(kRfcPublicPem);
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ(KeyIdToHex((*keys)[0].id()), kRfcKeyId);
}

TEST(Ed25519KeyTest, VerifiesItsOwnSignaturesOnly) {
  const Ed25519PrivateKey key = Ed25519PrivateKey::Generate();
  const Ed25519PrivateKey other = Ed25519PrivateKey::Generate();
  std::string signature = key.Sign("message");
  EXPECT_TRUE(key.public_key().Verify("message", signature));
  EXPECT_FALSE(key.public_key().Verify("messagf", signature));
  EXPECT_FALSE(other.public_key().Verify("message", signature));
  EXPECT_FALSE(key.public_key().Verify("message", signature.substr(1)));
  signature[10] ^= 1;
  EXPECT_FALSE(key.public_key().Verify("message", signature));
}

TEST(Ed25519KeyTest, GeneratedKeysRoundTripThroughPem) {
  const Ed25519PrivateKey key = Ed25519PrivateKey::Generate();
  absl::StatusOr<Ed25519PrivateKey> read =
      Ed25519PrivateKey::ParsePem(key.ToPem());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->public_key().id(), key.public_key().id());
  EXPECT_EQ(read->Sign("x"), key.Sign("x"));
  EXPECT_NE(Ed25519PrivateKey::Generate().public_key().id(),
            key.public_key().id());
}

TEST(Ed25519KeyTest, ReadsEveryPublicKeyOfAFileAndSkipsOtherText) {
  const Ed25519PrivateKey a = Ed25519PrivateKey::Generate();
  const Ed25519PrivateKey b = Ed25519PrivateKey::Generate();
  absl::StatusOr<std::vector<Ed25519PublicKey>> keys =
      Ed25519PublicKey::ParsePem("# release keys\n" + a.public_key().ToPem() +
                                 "old key, rotated out in May:\n" +
                                 b.public_key().ToPem());
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ((*keys)[0].id(), a.public_key().id());
  EXPECT_EQ((*keys)[1].id(), b.public_key().id());
}

TEST(Ed25519KeyTest, RefusesWhatIsNotAnEd25519Key) {
  EXPECT_FALSE(Ed25519PublicKey::ParsePem("").ok());
  EXPECT_FALSE(Ed25519PublicKey::ParsePem(kRsaPublicPem).ok());
  EXPECT_FALSE(Ed25519PublicKey::ParsePem(kRfcPrivatePem).ok());
  EXPECT_FALSE(Ed25519PrivateKey::ParsePem(kRfcPublicPem).ok());
  EXPECT_FALSE(Ed25519PublicKey::FromRaw("short").ok());
  std::string damaged = kRfcPrivatePem;
  damaged[40] = '!';
  absl::StatusOr<Ed25519PrivateKey> key = Ed25519PrivateKey::ParsePem(damaged);
  ASSERT_FALSE(key.ok());
  // Nothing of the key is echoed back.
  EXPECT_EQ(key.status().message().find("MC4C"), absl::string_view::npos);
}

}  // namespace
}  // namespace verity
