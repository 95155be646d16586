// A BlobInfo is believed only when its descriptor hashes to its digest.

#include "client/sdk/blob_info_check.h"

#include "client/testing/read_stream_fixture.h"
#include "gtest/gtest.h"
#include "proto/convert.h"

namespace verity::client {
namespace {

using ::absl::StatusCode;

verity::v1::BlobInfo InfoOf(const TestBlob& blob) {
  verity::v1::BlobInfo info;
  info.set_digest(blob.digest_text);
  *info.mutable_fsverity_descriptor() = DescriptorToProto(blob.tree.descriptor);
  return info;
}

TEST(BlobInfoTest, ConsistentInfoIsAccepted) {
  const TestBlob blob =
      MakeRandomTestBlob(10000, TestParams(HashAlgorithm::kSha512, 4096, "s"));
  absl::StatusOr<CheckedBlobInfo> checked = CheckBlobInfo(InfoOf(blob));
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ(checked->digest.digest, blob.digest.digest);
  EXPECT_EQ(checked->descriptor.data_size, 10000u);
  EXPECT_TRUE(CheckBlobInfo(InfoOf(blob), &blob.digest).ok());
}

TEST(BlobInfoTest, InconsistentInfoIsDataLoss) {
  const TestBlob blob =
      MakeRandomTestBlob(10000, TestParams(HashAlgorithm::kSha256, 4096));
  const TestBlob other =
      MakeRandomTestBlob(10000, TestParams(HashAlgorithm::kSha256, 4096), 2);
  verity::v1::BlobInfo info = InfoOf(blob);
  info.mutable_fsverity_descriptor()->set_data_size(10001);
  EXPECT_EQ(CheckBlobInfo(info).status().code(), StatusCode::kDataLoss);
  info = InfoOf(blob);
  info.set_digest(other.digest_text);
  EXPECT_EQ(CheckBlobInfo(info).status().code(), StatusCode::kDataLoss);
  info.set_digest("nonsense");
  EXPECT_EQ(CheckBlobInfo(info).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(CheckBlobInfo(InfoOf(other), &blob.digest).status().code(),
            StatusCode::kDataLoss);
}

}  // namespace
}  // namespace verity::client
