// Tests NamePolicy: which statements a name write needs with and without
// --name_keys, and which checks run before and inside the store.

#include "server/rpc/name_policy.h"

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"

namespace verity::server {
namespace {

using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

class NamePolicyTest : public ::testing::Test {
 protected:
  std::string Sign(const std::string& name, const ParsedDigest& digest,
                   uint64_t version, const Ed25519PrivateKey& key,
                   absl::Duration expires_in = absl::Hours(1),
                   absl::Time issued = kNow - absl::Minutes(1)) {
    NameClaim claim{name, digest, version, issued, issued + expires_in};
    const Ed25519PrivateKey* keys[] = {&key};
    return SignNameStatement(claim, keys).value();
  }
  NamePolicy Keyed() {
    return NamePolicy(TrustedKeys::Create({key_.public_key()}).value());
  }

  const Ed25519PrivateKey key_ = Ed25519PrivateKey::Generate();
  const Ed25519PrivateKey other_key_ = Ed25519PrivateKey::Generate();
  const ParsedDigest a_{HashAlgorithm::kSha256, std::string(32, 'a')};
  const ParsedDigest b_{HashAlgorithm::kSha256, std::string(32, 'b')};
};

TEST_F(NamePolicyTest, WithoutKeysANameNeedsNoStatement) {
  const absl::StatusOr<NameWrite> write =
      NamePolicy().Prepare("n", "", std::nullopt, NameKind::kFile, kNow);
  ASSERT_TRUE(write.ok()) << write.status();
  EXPECT_EQ(write->name, "n");
  EXPECT_EQ(write->statement, "");
  EXPECT_TRUE(RunNameCheck(*write, a_, "anything").ok());
}

TEST_F(NamePolicyTest, WithoutKeysAStatementMustNameThatNameAndBlob) {
  const NamePolicy policy;
  const std::string good = Sign("n", a_, 1, other_key_);
  const absl::StatusOr<NameWrite> write =
      policy.Prepare("n", good, std::nullopt, NameKind::kFile, kNow);
  ASSERT_TRUE(write.ok()) << write.status();
  EXPECT_EQ(write->statement, good);
  EXPECT_TRUE(RunNameCheck(*write, a_, "").ok());
  // No version rule without keys.
  EXPECT_TRUE(RunNameCheck(*write, a_, Sign("n", a_, 9, other_key_)).ok());
  // The blob, once known.
  const absl::Status wrong_blob = RunNameCheck(*write, b_, "");
  EXPECT_EQ(wrong_blob.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_blob.message(), HasSubstr("not the blob"));
  EXPECT_EQ(
      policy.Prepare("n", good, b_, NameKind::kFile, kNow).status().code(),
      absl::StatusCode::kInvalidArgument);
  // Another name; bytes that do not parse.
  const absl::Status wrong_name =
      policy.Prepare("m", good, std::nullopt, NameKind::kFile, kNow).status();
  EXPECT_EQ(wrong_name.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_name.message(), HasSubstr("was given for \"m\""));
  const absl::Status garbage =
      policy.Prepare("n", "garbage", std::nullopt, NameKind::kFile, kNow)
          .status();
  EXPECT_EQ(garbage.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(garbage.message(), HasSubstr("does not parse"));
}

TEST_F(NamePolicyTest, WithKeysEveryNameWriteNeedsAValidStatement) {
  const NamePolicy policy = Keyed();
  const absl::Status unsigned_write =
      policy.Prepare("n", "", std::nullopt, NameKind::kFile, kNow).status();
  EXPECT_EQ(unsigned_write.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unsigned_write.message(), HasSubstr("--name_keys"));
  const absl::Status untrusted =
      policy
          .Prepare("n", Sign("n", a_, 1, other_key_), a_, NameKind::kFile, kNow)
          .status();
  EXPECT_EQ(untrusted.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(untrusted.message(), HasSubstr("valid signatures"));
  std::string flipped = Sign("n", a_, 1, key_);
  flipped.back() ^= 1;  // the signature
  EXPECT_EQ(
      policy.Prepare("n", flipped, a_, NameKind::kFile, kNow).status().code(),
      absl::StatusCode::kInvalidArgument);
  const absl::Status expired =
      policy
          .Prepare("n", Sign("n", a_, 1, key_, absl::Seconds(1)), a_,
                   NameKind::kFile, kNow + absl::Hours(1))
          .status();
  EXPECT_EQ(expired.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(expired.message(), HasSubstr("expired"));
  EXPECT_EQ(
      policy.Prepare("m", Sign("n", a_, 1, key_), a_, NameKind::kFile, kNow)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      policy.Prepare("n", Sign("n", a_, 1, key_), b_, NameKind::kFile, kNow)
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      policy.Prepare("n", Sign("n", a_, 1, key_), a_, NameKind::kFile, kNow)
          .ok());
}

// A statement says whether its name means a file or a tree; the blob must
// be what it says, keys or not.
TEST_F(NamePolicyTest, TheStatementsKindMustBeTheBlobs) {
  NameClaim claim{"n",
                  a_,
                  1,
                  kNow - absl::Minutes(1),
                  kNow + absl::Hours(1),
                  NameKind::kTree};
  const Ed25519PrivateKey* keys[] = {&key_};
  const std::string tree = SignNameStatement(claim, keys).value();
  const std::string file = Sign("n", a_, 1, key_);
  for (const NamePolicy& policy : {NamePolicy(), Keyed()}) {
    EXPECT_TRUE(policy.Prepare("n", tree, a_, NameKind::kTree, kNow).ok());
    EXPECT_TRUE(policy.Prepare("n", file, a_, NameKind::kFile, kNow).ok());
    const absl::Status as_file =
        policy.Prepare("n", tree, a_, NameKind::kFile, kNow).status();
    EXPECT_EQ(as_file.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(as_file.message(), HasSubstr("means a tree"));
    EXPECT_EQ(
        policy.Prepare("n", file, a_, NameKind::kTree, kNow).status().code(),
        absl::StatusCode::kInvalidArgument);
  }
}

TEST_F(NamePolicyTest, WithKeysTheVersionMustRise) {
  const NamePolicy policy = Keyed();
  const absl::StatusOr<NameWrite> five = policy.Prepare(
      "n", Sign("n", a_, 5, key_), std::nullopt, NameKind::kFile, kNow);
  ASSERT_TRUE(five.ok()) << five.status();
  EXPECT_TRUE(RunNameCheck(*five, a_, "").ok());
  EXPECT_TRUE(RunNameCheck(*five, a_, Sign("n", b_, 4, key_)).ok());
  for (const uint64_t current : {5, 6}) {
    const absl::Status stale =
        RunNameCheck(*five, a_, Sign("n", b_, current, key_));
    EXPECT_EQ(stale.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(stale.message(), HasSubstr("not newer"));
  }
  // A stored statement that does not parse cannot hold the name.
  EXPECT_TRUE(RunNameCheck(*five, a_, "damaged").ok());
  // Nor can one the keys do not sign: planted with the highest version by
  // anyone who can write the store, or signed by a key since removed.
  for (const Ed25519PrivateKey* signer : {&other_key_, &key_}) {
    std::string planted = Sign("n", b_, UINT64_MAX, *signer);
    if (signer == &key_) planted.back() ^= 1;  // a signature that fails
    EXPECT_TRUE(RunNameCheck(*five, a_, planted).ok());
  }
  // Nor one the keys sign for another name.
  EXPECT_TRUE(RunNameCheck(*five, a_, Sign("m", b_, 9, key_)).ok());
  // An expired one still does: its version was the name's.
  EXPECT_EQ(RunNameCheck(
                *five, a_,
                Sign("n", b_, 9, key_, absl::Hours(1), kNow - absl::Hours(3)))
                .code(),
            absl::StatusCode::kFailedPrecondition);
  // The blob is still checked first.
  EXPECT_EQ(RunNameCheck(*five, b_, "").code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace verity::server
