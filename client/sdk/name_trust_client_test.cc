// The SDK's signed names against the in-process fake server: with trusted
// keys, FetchName and StatName accept a name only with a good statement, and
// each refusal is DATA_LOSS with its own message, before any Read, with the
// caller's sink never started. Rotation, fetches by digest, and publishing
// (SetName, Put with a statement) too.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "client/testing/fake_verity_service.h"
#include "client/testing/name_statements.h"
#include "client/testing/read_stream_fixture.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/trust/ed25519_key.h"
#include "verity/client.h"

namespace verity::sdk {
namespace {

using ::verity::client::FakeVerityServer;
using ::verity::client::PublicPem;
using ::verity::client::SignTestStatement;
using ::verity::client::TestClaim;

constexpr char kName[] = "models/latest";

// Records what a fetch did to it.
class RecordingSink final : public Sink {
 public:
  absl::Status Start(uint64_t) override {
    started = true;
    return absl::OkStatus();
  }
  absl::Status Write(uint64_t, absl::Span<const uint8_t> data) override {
    written.append(data.begin(), data.end());
    return absl::OkStatus();
  }
  void Abort() override { aborted = true; }

  bool started = false;
  bool aborted = false;
  std::string written;
};

class NameTrustClientTest : public ::testing::Test {
 protected:
  NameTrustClientTest()
      : a_(MakeRandomTestBlob(70000, TestParams(HashAlgorithm::kSha256, 4096))),
        b_(MakeRandomTestBlob(9000, TestParams(HashAlgorithm::kSha256, 4096),
                              2)),
        key1_(Ed25519PrivateKey::Generate()),
        key2_(Ed25519PrivateKey::Generate()) {
    server_.service().Add(a_, kName);
    server_.service().Add(b_);
    state_dir_ = ::testing::TempDir() + "/name_trust_client_test_XXXXXX";
    EXPECT_NE(mkdtemp(&state_dir_[0]), nullptr);
  }

  std::unique_ptr<Client> MakeClient(
      const std::vector<const Ed25519PrivateKey*>& keys, int threshold = 1,
      absl::Duration max_unseen_age = absl::InfiniteDuration()) {
    ClientOptions options;
    options.target = server_.address();
    options.trusted_keys = keys.empty() ? "" : PublicPem(keys);
    options.trusted_keys_threshold = threshold;
    options.state_dir = state_dir_;
    options.max_unseen_statement_age = max_unseen_age;
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // Stores a statement for kName (or `claim.name`) signed by `keys`.
  void Publish(TestClaim claim,
               const std::vector<const Ed25519PrivateKey*>& keys) {
    server_.service().SetStatement(kName, SignTestStatement(claim, keys));
  }
  TestClaim ClaimFor(const TestBlob& blob, uint64_t version) {
    return TestClaim{kName, blob.digest, version};
  }

  // FetchName refused with DATA_LOSS, nothing read and the sink untouched;
  // returns the message.
  std::string ExpectRefused(Client& client) {
    const size_t reads = server_.service().reads().size();
    RecordingSink sink;
    const absl::Status status = client.FetchName(kName, sink, {});
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), kName)) << status;
    EXPECT_FALSE(sink.started);
    EXPECT_EQ(sink.written, "");
    EXPECT_TRUE(sink.aborted);
    EXPECT_EQ(server_.service().reads().size(), reads);
    EXPECT_EQ(client.StatName(kName).status().code(),
              absl::StatusCode::kDataLoss);
    return std::string(status.message());
  }

  TestBlob a_;
  TestBlob b_;
  Ed25519PrivateKey key1_;
  Ed25519PrivateKey key2_;
  FakeVerityServer server_;
  std::string state_dir_;
};

TEST_F(NameTrustClientTest, AcceptsAGoodStatementAndReadsByItsDigest) {
  Publish(ClaimFor(a_, 3), {&key1_});
  std::unique_ptr<Client> client = MakeClient({&key1_});
  for (int parallel : {1, 4}) {
    FetchOptions options;
    options.parallel_streams = parallel;
    MemorySink sink;
    ASSERT_TRUE(client->FetchName(kName, sink, options).ok());
    EXPECT_EQ(sink.data(), a_.data);
  }
  for (const v1::ReadRequest& read : server_.service().reads()) {
    EXPECT_EQ(read.digest(), a_.digest_text);
    EXPECT_EQ(read.name(), "");
  }
  const absl::StatusOr<BlobInfo> info = client->StatName(kName);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->digest.ToString(), a_.digest_text);
  ASSERT_TRUE(info->name_statement.has_value());
  EXPECT_TRUE(info->name_statement->verified);
  EXPECT_EQ(info->name_statement->version, 3u);
  EXPECT_EQ(info->name_statement->signer_key_ids,
            std::vector<std::string>{KeyIdToHex(key1_.public_key().id())});
  EXPECT_GT(info->name_statement->expires, absl::Now());
}

TEST_F(NameTrustClientTest, EachBadStatementIsRefusedForItsOwnReason) {
  std::unique_ptr<Client> client = MakeClient({&key1_});
  std::vector<std::string> messages;
  // Missing.
  messages.push_back(ExpectRefused(*client));
  // Malformed.
  std::string flipped = SignTestStatement(ClaimFor(a_, 1), {&key1_});
  flipped[0] ^= 1;
  server_.service().SetStatement(kName, flipped);
  messages.push_back(ExpectRefused(*client));
  // Expired (beyond the clock-skew allowance).
  TestClaim expired = ClaimFor(a_, 1);
  expired.issued =
      absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now())) - absl::Hours(48);
  expired.valid_for = absl::Hours(47);
  Publish(expired, {&key1_});
  messages.push_back(ExpectRefused(*client));
  // For another name.
  TestClaim other = ClaimFor(a_, 1);
  other.name = "models/other";
  Publish(other, {&key1_});
  messages.push_back(ExpectRefused(*client));
  // By a key not trusted.
  Publish(ClaimFor(a_, 1), {&key2_});
  messages.push_back(ExpectRefused(*client));
  // Binding another digest than the one the server names.
  Publish(ClaimFor(b_, 1), {&key1_});
  messages.push_back(ExpectRefused(*client));
  EXPECT_TRUE(absl::StrContains(messages[0], "no signed statement"));
  EXPECT_TRUE(absl::StrContains(messages[1], "malformed"));
  EXPECT_TRUE(absl::StrContains(messages[2], "expired"));
  EXPECT_TRUE(absl::StrContains(messages[3], "models/other"));
  EXPECT_TRUE(absl::StrContains(messages[4], "1 by keys not trusted"));
  EXPECT_TRUE(absl::StrContains(messages[5], b_.digest_text));
  for (size_t i = 0; i < messages.size(); ++i) {
    for (size_t j = i + 1; j < messages.size(); ++j) {
      EXPECT_NE(messages[i], messages[j]);
    }
  }
}

TEST_F(NameTrustClientTest, ThresholdCountsDistinctTrustedSigners) {
  std::unique_ptr<Client> client = MakeClient({&key1_, &key2_}, 2);
  Publish(ClaimFor(a_, 1), {&key1_});
  EXPECT_TRUE(absl::StrContains(ExpectRefused(*client), "2 needed"));
  Publish(ClaimFor(a_, 1), {&key1_, &key2_});
  EXPECT_TRUE(client->StatName(kName).ok());
}

TEST_F(NameTrustClientTest, RollbackAndSameVersionSwapAreRefused) {
  std::unique_ptr<Client> client = MakeClient({&key1_});
  const std::string old_statement =
      SignTestStatement(ClaimFor(a_, 2), {&key1_});
  Publish(ClaimFor(a_, 3), {&key1_});
  ASSERT_TRUE(client->StatName(kName).ok());
  // A replica (or bucket writer) serving last version's statement.
  server_.service().SetStatement(kName, old_statement);
  EXPECT_TRUE(
      absl::StrContains(ExpectRefused(*client), "older than version 3"));
  // Another statement of version 3.
  TestClaim swapped = ClaimFor(b_, 3);
  server_.service().Add(b_, kName);
  Publish(swapped, {&key1_});
  EXPECT_TRUE(absl::StrContains(ExpectRefused(*client), "same version"));
  // Another client using the same state directory has seen it too.
  server_.service().SetStatement(kName, old_statement);
  server_.service().Add(a_, kName);
  ExpectRefused(*MakeClient({&key1_}));
  // Moving forward is fine.
  Publish(ClaimFor(b_, 4), {&key1_});
  server_.service().Add(b_, kName);
  EXPECT_EQ(client->StatName(kName)->name_statement->version, 4u);
}

// A fresh state (a new pod's) cannot tell a replayed statement from the
// newest: it takes a first statement only if it is recent; once a version
// is recorded, its age no longer matters (the rollback check does).
TEST_F(NameTrustClientTest, AFreshStateTakesOnlyARecentStatement) {
  TestClaim old = ClaimFor(a_, 2);
  old.issued -= absl::Hours(48);
  old.valid_for = absl::Hours(72);  // current: its age alone is the matter
  Publish(old, {&key1_});
  std::unique_ptr<Client> fresh =
      MakeClient({&key1_}, 1, /*max_unseen_age=*/absl::Hours(24));
  EXPECT_TRUE(absl::StrContains(ExpectRefused(*fresh), "has no record of it"));
  // Without the limit it is taken (and recorded); then the limit is moot.
  ASSERT_TRUE(MakeClient({&key1_})->StatName(kName).ok());
  EXPECT_TRUE(fresh->StatName(kName).ok());
  // A recent statement for a name never seen is taken.
  Publish(ClaimFor(a_, 3), {&key1_});
  EXPECT_TRUE(fresh->StatName(kName).ok());
}

TEST_F(NameTrustClientTest, RotationTrustsTheNewKeyAndNotTheRemovedOne) {
  Publish(ClaimFor(a_, 1), {&key1_});
  ASSERT_TRUE(MakeClient({&key1_})->StatName(kName).ok());
  // The publisher lists key2 and drops key1.
  std::unique_ptr<Client> rotated = MakeClient({&key2_});
  ExpectRefused(*rotated);
  Publish(ClaimFor(a_, 2), {&key2_});
  EXPECT_TRUE(rotated->StatName(kName).ok());
  // During the change, both listed: either signs.
  std::unique_ptr<Client> both = MakeClient({&key1_, &key2_});
  EXPECT_TRUE(both->StatName(kName).ok());
}

TEST_F(NameTrustClientTest, RotationForgetsNothingThatWasSeen) {
  // Seen under key1 alone: version 5.
  Publish(ClaimFor(a_, 5), {&key1_});
  ASSERT_TRUE(MakeClient({&key1_})->StatName(kName).ok());
  // key2 is listed beside key1: key1's record still holds, so an older
  // statement by key1 is a rollback, even though the set of keys is new.
  std::unique_ptr<Client> both = MakeClient({&key1_, &key2_});
  Publish(ClaimFor(a_, 3), {&key1_});
  EXPECT_TRUE(absl::StrContains(ExpectRefused(*both), "rollback"));
  Publish(ClaimFor(a_, 6), {&key2_});
  EXPECT_TRUE(both->StatName(kName).ok()) << both->StatName(kName).status();
  // key1 removed: key2's record (version 6, accepted while it was listed)
  // refuses an older statement by key2 too.
  Publish(ClaimFor(a_, 4), {&key2_});
  EXPECT_TRUE(
      absl::StrContains(ExpectRefused(*MakeClient({&key2_})), "rollback"));
}

TEST_F(NameTrustClientTest, AStolenKeysVersionEndsWithItsRemoval) {
  // key1 is the publisher's; key2, also trusted, is stolen.
  const std::string honest_5 = SignTestStatement(ClaimFor(a_, 5), {&key1_});
  server_.service().SetStatement(kName, honest_5);
  ASSERT_TRUE(MakeClient({&key1_, &key2_})->StatName(kName).ok());
  // The thief fast-forwards the name; while key2 is trusted, clients follow.
  Publish(ClaimFor(b_, UINT64_MAX - 1), {&key2_});
  server_.service().Add(b_, kName);
  ASSERT_TRUE(MakeClient({&key1_, &key2_})->StatName(kName).ok());
  Publish(ClaimFor(a_, 6), {&key1_});
  server_.service().Add(a_, kName);
  EXPECT_TRUE(absl::StrContains(ExpectRefused(*MakeClient({&key1_, &key2_})),
                                "older than version 18446744073709551614"));
  // key2 removed: what it alone vouched for no longer blocks the honest key.
  std::unique_ptr<Client> recovered = MakeClient({&key1_});
  absl::StatusOr<BlobInfo> info = recovered->StatName(kName);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->name_statement->version, 6u);
  // A replay of an older honest statement is still a rollback, and the
  // thief's is not trusted.
  server_.service().SetStatement(kName, honest_5);
  EXPECT_TRUE(absl::StrContains(ExpectRefused(*recovered), "rollback"));
  Publish(ClaimFor(b_, UINT64_MAX - 1), {&key2_});
  server_.service().Add(b_, kName);
  EXPECT_TRUE(absl::StrContains(ExpectRefused(*recovered), "not trusted"));
}

TEST_F(NameTrustClientTest, StreamOfAnotherBlobThanTheStatementIsDataLoss) {
  Publish(ClaimFor(a_, 1), {&key1_});
  std::unique_ptr<Client> client = MakeClient({&key1_});
  // The Stat is honest, the Read serves blob b.
  const std::vector<v1::ReadResponse> other =
      client::HonestReadStream(b_, 0, std::nullopt);
  server_.service().SetTamper(
      [other](std::vector<v1::ReadResponse>* stream) { *stream = other; });
  MemorySink sink;
  EXPECT_EQ(client->FetchName(kName, sink, {}).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(sink.data(), "");
}

TEST_F(NameTrustClientTest, FetchByDigestNeedsNoStatement) {
  std::unique_ptr<Client> client = MakeClient({&key1_});
  const Digest digest = *Digest::Parse(b_.digest_text);
  EXPECT_EQ(*client->ReadRange(digest, 0, b_.data.size()), b_.data);
}

TEST_F(NameTrustClientTest, WithoutKeysNamesAreTheServersWord) {
  std::unique_ptr<Client> client = MakeClient({});
  MemorySink sink;
  ASSERT_TRUE(client->FetchName(kName, sink, {}).ok());
  EXPECT_EQ(sink.data(), a_.data);
  Publish(ClaimFor(a_, 7), {&key2_});
  const absl::StatusOr<BlobInfo> info = client->StatName(kName);
  ASSERT_TRUE(info.ok());
  ASSERT_TRUE(info->name_statement.has_value());
  EXPECT_FALSE(info->name_statement->verified);
  EXPECT_EQ(info->name_statement->version, 7u);
}

TEST_F(NameTrustClientTest, BadTrustOptionsAreInvalidArgument) {
  ClientOptions options;
  options.target = server_.address();
  options.state_dir = state_dir_;
  options.trusted_keys = "not a key";
  EXPECT_EQ(Client::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.trusted_keys = PublicPem({&key1_});
  for (int threshold : {0, 2}) {
    options.trusted_keys_threshold = threshold;
    EXPECT_EQ(Client::Create(options).status().code(),
              absl::StatusCode::kInvalidArgument)
        << threshold;
  }
}

TEST_F(NameTrustClientTest, PublishersSetNamesAndPutStatements) {
  std::unique_ptr<Client> client = MakeClient({&key1_});
  const std::string statement =
      SignTestStatement(TestClaim{"models/next", b_.digest, 1}, {&key1_});
  const absl::StatusOr<BlobInfo> set =
      client->SetName("models/next", *Digest::Parse(b_.digest_text), statement);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(server_.service().Statement("models/next"), statement);
  EXPECT_EQ(client->StatName("models/next")->digest.ToString(), b_.digest_text);
  EXPECT_EQ(client
                ->SetName("models/next",
                          *Digest::Parse("sha256:" + std::string(64, '0')), "")
                .status()
                .code(),
            absl::StatusCode::kNotFound);

  PutOptions put;
  put.name_statement = statement;
  const ByteSource empty = [](absl::Span<uint8_t>) -> absl::StatusOr<size_t> {
    return 0;
  };
  EXPECT_EQ(client->PutStream(empty, put).status().code(),
            absl::StatusCode::kInvalidArgument);
  put.name = "models/put";
  const std::string put_statement = SignTestStatement(
      TestClaim{
          "models/put",
          MakeTestBlob("", TestParams(HashAlgorithm::kSha256, 4096)).digest, 1},
      {&key1_});
  put.name_statement = put_statement;
  ASSERT_TRUE(client->PutStream(empty, put).ok());
  EXPECT_EQ(server_.service().Statement("models/put"), put_statement);
  EXPECT_TRUE(client->StatName("models/put").ok());
}

}  // namespace
}  // namespace verity::sdk
