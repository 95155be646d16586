#include "client/sdk/batch_read.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "proto/convert.h"

namespace verity::client {
namespace {

// The answer an honest server gives for `blob`.
v1::BatchReadResponse::Blob AnswerFor(const TestBlob& blob) {
  v1::BatchReadResponse::Blob answer;
  v1::ReadResponse& read = *answer.mutable_read();
  read.set_digest(blob.digest_text);
  SetDescriptor(blob.tree.descriptor, &read);
  read.set_data(blob.data);
  return answer;
}

absl::StatusCode CodeOf(v1::BatchReadResponse::Blob answer,
                        const ParsedDigest& trusted) {
  return CheckBatchBlob(answer, trusted, nullptr).status().code();
}

TEST(CheckBatchBlobTest, ReturnsTheBytesOfABlobThatHashesToItsDigest) {
  for (const MerkleParams& params :
       {MerkleParams{}, TestParams(HashAlgorithm::kSha512, 1024, "salt")}) {
    for (uint64_t size : {0, 1, 4096, 16384, 70000}) {
      const TestBlob blob = MakeRandomTestBlob(size, params);
      v1::BatchReadResponse::Blob answer = AnswerFor(blob);
      const absl::StatusOr<std::string> bytes =
          CheckBatchBlob(answer, blob.digest, nullptr);
      ASSERT_TRUE(bytes.ok()) << size << ": " << bytes.status();
      EXPECT_EQ(*bytes, blob.data);
    }
  }
}

TEST(CheckBatchBlobTest, KeepsTheServersErrorForTheBlob) {
  const TestBlob blob = MakeRandomTestBlob(100, MerkleParams{});
  v1::BatchReadResponse::Blob answer;
  answer.set_code(static_cast<int>(absl::StatusCode::kNotFound));
  answer.set_message("no such blob");
  const absl::Status status =
      CheckBatchBlob(answer, blob.digest, nullptr).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "no such blob");
  answer.set_code(99);
  EXPECT_EQ(CodeOf(answer, blob.digest), absl::StatusCode::kUnknown);
}

TEST(CheckBatchBlobTest, RefusesDataThatDoesNotHashToTheTrustedDigest) {
  const TestBlob blob = MakeRandomTestBlob(16384, MerkleParams{});
  const TestBlob other = MakeRandomTestBlob(16384, MerkleParams{}, 2);
  // One flipped bit.
  v1::BatchReadResponse::Blob flipped = AnswerFor(blob);
  (*flipped.mutable_read()->mutable_data())[5000] ^= 1;
  EXPECT_EQ(CodeOf(flipped, blob.digest), absl::StatusCode::kDataLoss);
  // Another blob, whole and honest about itself.
  EXPECT_EQ(CodeOf(AnswerFor(other), blob.digest), absl::StatusCode::kDataLoss);
  // The same bytes under other params: another digest.
  const TestBlob salted =
      MakeTestBlob(blob.data, TestParams(HashAlgorithm::kSha256, 4096, "salt"));
  EXPECT_EQ(CodeOf(AnswerFor(salted), blob.digest),
            absl::StatusCode::kDataLoss);
  // Cut short, with a descriptor that says so.
  const TestBlob shorter = MakeTestBlob(blob.data.substr(0, 12288), {});
  EXPECT_EQ(CodeOf(AnswerFor(shorter), blob.digest),
            absl::StatusCode::kDataLoss);
}

TEST(CheckBatchBlobTest, RefusesAnAnswerNotShapedAsAWholeBlob) {
  const TestBlob blob = MakeRandomTestBlob(16384, MerkleParams{});
  v1::BatchReadResponse::Blob no_descriptor = AnswerFor(blob);
  no_descriptor.mutable_read()->clear_fsverity_descriptor();
  EXPECT_EQ(CodeOf(no_descriptor, blob.digest), absl::StatusCode::kDataLoss);
  v1::BatchReadResponse::Blob offset = AnswerFor(blob);
  offset.mutable_read()->set_data_offset(4096);
  EXPECT_EQ(CodeOf(offset, blob.digest), absl::StatusCode::kDataLoss);
  v1::BatchReadResponse::Blob short_data = AnswerFor(blob);
  short_data.mutable_read()->mutable_data()->resize(8192);
  EXPECT_EQ(CodeOf(short_data, blob.digest), absl::StatusCode::kDataLoss);
  v1::BatchReadResponse::Blob tree_blocks = AnswerFor(blob);
  tree_blocks.mutable_read()->add_tree_blocks()->set_index(0);
  EXPECT_EQ(CodeOf(tree_blocks, blob.digest), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace verity::client
