#include "client/names/resolved_blob.h"

#include <string>

#include "absl/status/status.h"
#include "client/testing/memory_client.h"
#include "gtest/gtest.h"

namespace verity::client {
namespace {

using ::absl::StatusCode;
using ::verity::testing::MemoryClient;

sdk::NameStatementInfo Statement(bool tree, bool verified) {
  sdk::NameStatementInfo statement;
  statement.tree = tree;
  statement.version = 7;
  statement.verified = verified;
  return statement;
}

BlobRef Named(std::string name) { return BlobRef{std::nullopt, name}; }

TEST(ResolvedBlobTest, AnUnsignedNameIsATreeAsTheServerSays) {
  MemoryClient client;
  sdk::PutOptions manifest;
  manifest.tree_manifest = true;
  const sdk::Digest tree =
      client
          .PutStream(
              [](absl::Span<uint8_t>) -> absl::StatusOr<size_t> { return 0; },
              manifest)
          ->info.digest;
  client.Point("app", tree);
  absl::StatusOr<ResolvedBlob> blob = ResolveBlob(client, Named("app"));
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_EQ(blob->digest().ToString(), tree.ToString());
  EXPECT_TRUE(blob->tree);
  EXPECT_FALSE(blob->tree_is_signed);
  EXPECT_TRUE(CheckTree(*blob, Named("app"), /*insist=*/false).ok());
}

TEST(ResolvedBlobTest, AVerifiedStatementDecidesOverTheServer) {
  MemoryClient client;
  sdk::PutOptions manifest;
  manifest.tree_manifest = true;  // the server says tree; the signer, file
  const sdk::Digest digest =
      client
          .PutStream(
              [](absl::Span<uint8_t>) -> absl::StatusOr<size_t> { return 0; },
              manifest)
          ->info.digest;
  client.Point("app", digest, Statement(/*tree=*/false, /*verified=*/true));
  absl::StatusOr<ResolvedBlob> blob = ResolveBlob(client, Named("app"));
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_FALSE(blob->tree);
  EXPECT_TRUE(blob->tree_is_signed);
  // Signed as a file: never read as a tree, even when the user insists.
  const absl::Status status = CheckTree(*blob, Named("app"), /*insist=*/true);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("app is signed as a file"), std::string::npos)
      << status;
  // An unverified statement decides nothing.
  client.Point("app", digest, Statement(/*tree=*/false, /*verified=*/false));
  blob = ResolveBlob(client, Named("app"));
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_TRUE(blob->tree);
  EXPECT_FALSE(blob->tree_is_signed);
}

TEST(ResolvedBlobTest, AFileIsReadAsATreeOnlyWhenTheUserInsists) {
  MemoryClient client;
  const sdk::Digest digest = client.Add("plain bytes");
  absl::StatusOr<BlobRef> ref = ParseBlobRef(digest.ToString());
  ASSERT_TRUE(ref.ok()) << ref.status();
  absl::StatusOr<ResolvedBlob> blob = ResolveBlob(client, *ref);
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_EQ(client.calls(MemoryClient::Call::kStat), 1u);
  EXPECT_EQ(client.calls(MemoryClient::Call::kStatName), 0u);
  EXPECT_EQ(blob->info.size, 11u);
  EXPECT_FALSE(blob->tree);
  EXPECT_TRUE(CheckTree(*blob, *ref, /*insist=*/true).ok());
  EXPECT_EQ(CheckTree(*blob, *ref, /*insist=*/false).code(),
            StatusCode::kFailedPrecondition);
}

TEST(ResolvedBlobTest, TheServersRefusalIsReturned) {
  MemoryClient client;
  EXPECT_EQ(ResolveBlob(client, Named("nope")).status().code(),
            StatusCode::kNotFound);
  client.Point("app", client.Add("x"));
  client.Fail(MemoryClient::Call::kStatName,
              absl::DataLossError("the statement does not verify"));
  EXPECT_EQ(ResolveBlob(client, Named("app")).status().code(),
            StatusCode::kDataLoss);
}

}  // namespace
}  // namespace verity::client
