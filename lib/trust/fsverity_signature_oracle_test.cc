// Oracle tests: signatures made at test time by `fsverity sign` (and, for the
// shapes it never makes, `openssl smime`) with keys and certificates made by
// `openssl req`. The binary also links BoringSSL, which computes the digests
// that are checked, so it proves the two libraries stay apart in one process.

#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/file_digest.h"
#include "lib/tree/merkle_params.h"
#include "lib/trust/fsverity_signature.h"

namespace verity {
namespace {

using ::testing::HasSubstr;

constexpr char kDoesNotVerify[] =
    "fs-verity signature does not verify against the pinned certificates";
constexpr char kNotPinned[] =
    "fs-verity signature names a signer that is not among the pinned "
    "certificates";
constexpr char kNotPkcs7[] =
    "fs-verity signature is not a DER PKCS#7 SignedData";

// A key and its self-signed certificate, as files and as the PEM text.
struct KeyPair {
  std::string key_path;
  std::string cert_path;
  std::string cert_pem;
};

absl::StatusOr<KeyPair> MakeKeyPair(absl::string_view name,
                                    absl::string_view newkey,
                                    absl::string_view subject,
                                    absl::string_view serial) {
  KeyPair pair{absl::StrCat(TestTempDir(), "/", name, ".key"),
               absl::StrCat(TestTempDir(), "/", name, ".crt"), ""};
  absl::StatusOr<std::string> out = RunShellCommand(
      absl::StrCat("openssl req -x509 -nodes -days 2 ", newkey, " -subj ",
                   ShellQuote(subject), " -set_serial ", serial, " -keyout ",
                   ShellQuote(pair.key_path), " -out ",
                   ShellQuote(pair.cert_path), " 2>&1"));
  if (!out.ok()) return out.status();
  absl::StatusOr<std::string> pem = ReadTestFile(pair.cert_path);
  if (!pem.ok()) return pem.status();
  pair.cert_pem = *std::move(pem);
  return pair;
}

FsverityCertificates Pin(absl::string_view pem) {
  absl::StatusOr<FsverityCertificates> certs =
      FsverityCertificates::FromPem(pem);
  EXPECT_TRUE(certs.ok()) << certs.status();
  return *std::move(certs);
}

// A file and its digest as our Merkle code (BoringSSL) computes it, checked
// against the digest `fsverity sign` reports.
struct SignedBlob {
  ParsedDigest digest;
  std::string signature;
};

absl::StatusOr<SignedBlob> Sign(absl::string_view path,
                                const MerkleParams& params,
                                const KeyPair& signer) {
  absl::StatusOr<MerkleTree> tree = BuildMerkleTreeFromFile(path, params, 1);
  if (!tree.ok()) return tree.status();
  SignedBlob blob{ParsedDigest{params.hash_algorithm, tree->digest}, ""};
  absl::StatusOr<FsveritySignOutput> signed_file =
      RunFsveritySign(path, params, signer.key_path, signer.cert_path);
  if (!signed_file.ok()) return signed_file.status();
  if (!absl::StrContains(signed_file->line, blob.digest.ToString())) {
    return absl::InternalError(absl::StrCat("fsverity sign printed `",
                                            signed_file->line, "`, not ",
                                            blob.digest.ToString()));
  }
  blob.signature = std::move(signed_file->signature);
  return blob;
}

// Keys, certificates, blobs and signatures, made once for the suite.
struct Oracle {
  KeyPair rsa, ecdsa, stranger, impostor;
  SignedBlob rsa_a, ecdsa_a, rsa_a_sha512, impostor_a;
  ParsedDigest digest_b;
  std::string attached;     // openssl smime -nodetach: carries its content
  std::string two_signers;  // openssl smime with the RSA and ECDSA signers
};

absl::StatusOr<std::string> SmimeSign(const Oracle& o, const ParsedDigest& d,
                                      absl::string_view options) {
  absl::StatusOr<std::string> message =
      WriteTestFile("formatted_digest", FormattedDigest(d));
  if (!message.ok()) return message.status();
  const std::string out = absl::StrCat(*message, ".p7s");
  absl::StatusOr<std::string> run = RunShellCommand(absl::StrCat(
      "openssl smime -sign -binary -noattr -nocerts -outform DER -in ",
      ShellQuote(*message), " -out ", ShellQuote(out), " ", options, " 2>&1"));
  if (!run.ok()) return run.status();
  return ReadTestFile(out);
}

std::string SignerOptions(const KeyPair& pair) {
  return absl::StrCat(" -signer ", ShellQuote(pair.cert_path), " -inkey ",
                      ShellQuote(pair.key_path));
}

#define ORACLE_ASSIGN(lhs, expr)            \
  {                                         \
    auto value = (expr);                    \
    if (!value.ok()) return value.status(); \
    lhs = *std::move(value);                \
  }

absl::StatusOr<Oracle> MakeOracle() {
  Oracle o;
  const std::string rsa = "-newkey rsa:2048";
  const std::string p256 = "-newkey ec -pkeyopt ec_paramgen_curve:P-256";
  ORACLE_ASSIGN(o.rsa, MakeKeyPair("rsa", rsa, "/CN=verityd signer", "4242"));
  ORACLE_ASSIGN(o.ecdsa, MakeKeyPair("ecdsa", p256, "/CN=verityd ec", "7"));
  ORACLE_ASSIGN(o.stranger, MakeKeyPair("stranger", rsa, "/CN=other", "4242"));
  // The same issuer and serial as `rsa`: only the key tells them apart.
  ORACLE_ASSIGN(o.impostor,
                MakeKeyPair("impostor", rsa, "/CN=verityd signer", "4242"));
  std::string a_path, b_path;
  ORACLE_ASSIGN(a_path, WriteTestFile("a", std::string(100000, 'a')));
  ORACLE_ASSIGN(b_path, WriteTestFile("b", std::string(100000, 'b')));
  MerkleParams sha256;
  MerkleParams sha512;
  sha512.hash_algorithm = HashAlgorithm::kSha512;
  ORACLE_ASSIGN(o.rsa_a, Sign(a_path, sha256, o.rsa));
  ORACLE_ASSIGN(o.ecdsa_a, Sign(a_path, sha256, o.ecdsa));
  ORACLE_ASSIGN(o.rsa_a_sha512, Sign(a_path, sha512, o.rsa));
  ORACLE_ASSIGN(o.impostor_a, Sign(a_path, sha256, o.impostor));
  SignedBlob b;
  ORACLE_ASSIGN(b, Sign(b_path, sha256, o.rsa));
  o.digest_b = b.digest;
  ORACLE_ASSIGN(o.attached, SmimeSign(o, o.rsa_a.digest,
                                      "-nodetach" + SignerOptions(o.rsa)));
  ORACLE_ASSIGN(o.two_signers,
                SmimeSign(o, o.rsa_a.digest,
                          SignerOptions(o.rsa) + SignerOptions(o.ecdsa)));
  return o;
}

const Oracle& GetOracle() {
  static const absl::StatusOr<Oracle>* const oracle =
      new absl::StatusOr<Oracle>(MakeOracle());
  // Every test needs it; without it nothing below means anything.
  if (!oracle->ok()) {
    ADD_FAILURE() << oracle->status();
    abort();
  }
  return **oracle;
}

absl::Status Verify(const SignedBlob& blob, absl::string_view pem) {
  return VerifyFsveritySignature(blob.digest, blob.signature, Pin(pem));
}

TEST(FsveritySignatureOracleTest, AcceptsRsaAndEcdsaSignatures) {
  const Oracle& o = GetOracle();
  EXPECT_EQ(Verify(o.rsa_a, o.rsa.cert_pem), absl::OkStatus());
  EXPECT_EQ(Verify(o.ecdsa_a, o.ecdsa.cert_pem), absl::OkStatus());
  EXPECT_EQ(Verify(o.rsa_a_sha512, o.rsa.cert_pem), absl::OkStatus());
  for (const SignedBlob* blob : {&o.rsa_a, &o.ecdsa_a, &o.rsa_a_sha512}) {
    EXPECT_EQ(CheckFsveritySignatureFormat(blob->signature), absl::OkStatus());
  }
}

TEST(FsveritySignatureOracleTest, FindsTheSignerAmongSeveralPinned) {
  const Oracle& o = GetOracle();
  const std::string bundle = o.stranger.cert_pem + "text between blocks\n" +
                             o.ecdsa.cert_pem + o.rsa.cert_pem;
  const FsverityCertificates pinned = Pin(bundle);
  EXPECT_EQ(pinned.size(), 3u);
  EXPECT_EQ(VerifyFsveritySignature(o.rsa_a.digest, o.rsa_a.signature, pinned),
            absl::OkStatus());
  EXPECT_EQ(
      VerifyFsveritySignature(o.ecdsa_a.digest, o.ecdsa_a.signature, pinned),
      absl::OkStatus());
}

// The last bytes of fsverity sign's DER are the signature value itself (no
// unsigned attributes follow it).
TEST(FsveritySignatureOracleTest, RefusesAFlippedSignatureByte) {
  const Oracle& o = GetOracle();
  for (const auto& [blob, pem] : {std::pair{&o.rsa_a, &o.rsa.cert_pem},
                                  std::pair{&o.ecdsa_a, &o.ecdsa.cert_pem}}) {
    for (size_t from_end : {1, 5, 20}) {
      SignedBlob flipped = *blob;
      flipped.signature[flipped.signature.size() - from_end] ^= 0x01;
      const absl::Status status = Verify(flipped, *pem);
      EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
      EXPECT_THAT(status.message(), HasSubstr(kDoesNotVerify));
      // Still well-formed: only the verification can tell.
      EXPECT_EQ(CheckFsveritySignatureFormat(flipped.signature),
                absl::OkStatus());
    }
  }
}

TEST(FsveritySignatureOracleTest, RefusesTheSignatureOfAnotherDigest) {
  const Oracle& o = GetOracle();
  SignedBlob other = o.rsa_a;
  other.digest = o.digest_b;
  absl::Status status = Verify(other, o.rsa.cert_pem);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(kDoesNotVerify));
  // The SHA-512 digest of the same file is another message too.
  other.digest = o.rsa_a_sha512.digest;
  status = Verify(other, o.rsa.cert_pem);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(kDoesNotVerify));
}

TEST(FsveritySignatureOracleTest, RefusesASignerThatIsNotPinned) {
  const Oracle& o = GetOracle();
  for (const auto& [blob, pem] : {std::pair{&o.rsa_a, &o.stranger.cert_pem},
                                  std::pair{&o.rsa_a, &o.ecdsa.cert_pem},
                                  std::pair{&o.ecdsa_a, &o.rsa.cert_pem}}) {
    const absl::Status status = Verify(*blob, *pem);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(status.message(), HasSubstr(kNotPinned));
  }
}

// An attacker's certificate may copy the pinned one's issuer and serial; the
// pinned key still decides.
TEST(FsveritySignatureOracleTest, RefusesAnImpostorWithThePinnedIssuerSerial) {
  const Oracle& o = GetOracle();
  EXPECT_EQ(Verify(o.impostor_a, o.impostor.cert_pem), absl::OkStatus());
  const absl::Status status = Verify(o.impostor_a, o.rsa.cert_pem);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(kDoesNotVerify));
}

TEST(FsveritySignatureOracleTest, RefusesTruncatedSignatures) {
  const Oracle& o = GetOracle();
  const std::string& whole = o.rsa_a.signature;
  for (size_t size : {whole.size() - 1, whole.size() / 2, size_t{1}}) {
    SignedBlob truncated = o.rsa_a;
    truncated.signature = whole.substr(0, size);
    const absl::Status status = Verify(truncated, o.rsa.cert_pem);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << size;
    EXPECT_THAT(status.message(), HasSubstr(kNotPkcs7)) << size;
    EXPECT_EQ(CheckFsveritySignatureFormat(truncated.signature).code(),
              absl::StatusCode::kInvalidArgument);
  }
}

TEST(FsveritySignatureOracleTest, RefusesGarbageAndNothing) {
  const Oracle& o = GetOracle();
  SignedBlob garbage = o.rsa_a;
  // Deterministic bytes, the first of them a DER SEQUENCE tag.
  for (size_t i = 0; i < garbage.signature.size(); ++i) {
    garbage.signature[i] = static_cast<char>((i * 7919 + 0x30) & 0xff);
  }
  absl::Status status = Verify(garbage, o.rsa.cert_pem);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr(kNotPkcs7));
  garbage.signature.clear();
  status = Verify(garbage, o.rsa.cert_pem);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "fs-verity signature is empty");
}

TEST(FsveritySignatureOracleTest, RefusesTrailingBytes) {
  const Oracle& o = GetOracle();
  SignedBlob padded = o.rsa_a;
  padded.signature += '\0';
  const absl::Status status = Verify(padded, o.rsa.cert_pem);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(),
            "fs-verity signature has 1 bytes after its DER PKCS#7");
}

// Valid PKCS#7 signatures of the right message, in shapes fs-verity's is not.
TEST(FsveritySignatureOracleTest, RefusesAttachedAndDoublySignedData) {
  const Oracle& o = GetOracle();
  const FsverityCertificates both = Pin(o.rsa.cert_pem + o.ecdsa.cert_pem);
  absl::Status status =
      VerifyFsveritySignature(o.rsa_a.digest, o.attached, both);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(),
            "fs-verity signature is not detached: it carries content");
  EXPECT_EQ(CheckFsveritySignatureFormat(o.attached).code(),
            absl::StatusCode::kInvalidArgument);
  status = VerifyFsveritySignature(o.rsa_a.digest, o.two_signers, both);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(),
            "fs-verity signature has 2 signers; exactly one is expected");
  EXPECT_EQ(CheckFsveritySignatureFormat(o.two_signers).code(),
            absl::StatusCode::kInvalidArgument);
}

// systemd's roothash.p7s, made as its documentation makes it: `openssl smime
// -sign -nocerts -noattr -binary` over the root hash in hex, no newline.
absl::StatusOr<std::string> SignRootHashText(const KeyPair& signer,
                                             absl::string_view text) {
  absl::StatusOr<std::string> message = WriteTestFile("roothash.txt", text);
  if (!message.ok()) return message.status();
  const std::string out = absl::StrCat(*message, ".p7s");
  absl::StatusOr<std::string> run = RunShellCommand(absl::StrCat(
      "openssl smime -sign -nocerts -noattr -binary -outform DER -in ",
      ShellQuote(*message), " -out ", ShellQuote(out), SignerOptions(signer),
      " 2>&1"));
  if (!run.ok()) return run.status();
  return ReadTestFile(out);
}

TEST(FsveritySignatureOracleTest, RootHashSignaturesAsSystemdMakesThem) {
  const Oracle& o = GetOracle();
  const std::string root(32, '\x3c');
  const std::string hex = absl::BytesToHexString(root);
  for (const KeyPair* signer : {&o.rsa, &o.ecdsa}) {
    absl::StatusOr<std::string> p7s = SignRootHashText(*signer, hex);
    ASSERT_TRUE(p7s.ok()) << p7s.status();
    EXPECT_TRUE(
        VerifyRootHashSignature(root, *p7s, Pin(signer->cert_pem)).ok());
    std::string other = root;
    other[5] ^= 1;
    EXPECT_EQ(
        VerifyRootHashSignature(other, *p7s, Pin(signer->cert_pem)).code(),
        absl::StatusCode::kDataLoss);
    EXPECT_EQ(
        VerifyRootHashSignature(root, *p7s, Pin(o.stranger.cert_pem)).code(),
        absl::StatusCode::kDataLoss);
  }
  // The content is exactly the lowercase hex: not with a newline, not upper
  // case, not the raw bytes.
  for (const std::string& text :
       {hex + "\n", absl::AsciiStrToUpper(hex), root}) {
    absl::StatusOr<std::string> p7s = SignRootHashText(o.rsa, text);
    ASSERT_TRUE(p7s.ok()) << p7s.status();
    EXPECT_EQ(VerifyRootHashSignature(root, *p7s, Pin(o.rsa.cert_pem)).code(),
              absl::StatusCode::kDataLoss);
  }
  EXPECT_EQ(VerifyRootHashSignature("", "x", Pin(o.rsa.cert_pem)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FsveritySignatureOracleTest, RefusesAMalformedDigest) {
  const Oracle& o = GetOracle();
  SignedBlob blob = o.rsa_a;
  blob.digest.digest.pop_back();
  EXPECT_EQ(Verify(blob, o.rsa.cert_pem).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FsveritySignatureOracleTest, ThreadsShareOnePinnedSet) {
  const Oracle& o = GetOracle();
  const FsverityCertificates pinned = Pin(o.rsa.cert_pem + o.ecdsa.cert_pem);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const SignedBlob& blob = t % 2 == 0 ? o.rsa_a : o.ecdsa_a;
      for (int i = 0; i < 25; ++i) {
        if (!VerifyFsveritySignature(blob.digest, blob.signature, pinned)
                 .ok()) {
          ++failures[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(failures, ::testing::Each(0));
}

// BoringSSL's SHA-256 in this binary still answers correctly after OpenSSL
// has worked in the same process (the digests above were BoringSSL's too).
TEST(FsveritySignatureOracleTest, BoringSslStillHashesAfterOpenSsl) {
  const Oracle& o = GetOracle();
  EXPECT_EQ(Verify(o.rsa_a, o.rsa.cert_pem), absl::OkStatus());
  EXPECT_EQ(absl::BytesToHexString(
                ComputeHash(HashAlgorithm::kSha256, AsBytes("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace verity
