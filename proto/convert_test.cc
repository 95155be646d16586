// Round trips, and the wire values no descriptor or parameter set can hold.

#include "proto/convert.h"

#include "gtest/gtest.h"

namespace verity {
namespace {

using ::absl::StatusCode;

TEST(ProtoConvertTest, DescriptorRoundTrips) {
  Descriptor d;
  d.hash_algorithm = HashAlgorithm::kSha512;
  d.log_block_size = 16;
  d.salt = "salt";
  d.data_size = 123456789;
  d.root_hash = std::string(64, 'r');
  const verity::v1::FsverityDescriptor proto = DescriptorToProto(d);
  EXPECT_EQ(proto.hash_algorithm(), verity::v1::SHA512);
  absl::StatusOr<Descriptor> back = DescriptorFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back->Serialize(), *d.Serialize());
}

TEST(ProtoConvertTest, ImpossibleDescriptorsAreDataLoss) {
  verity::v1::FsverityDescriptor proto = DescriptorToProto(
      Descriptor{HashAlgorithm::kSha256, 12, "", 1, std::string(32, 'r')});
  proto.set_hash_algorithm(verity::v1::HASH_ALGORITHM_UNSPECIFIED);
  EXPECT_EQ(DescriptorFromProto(proto).status().code(), StatusCode::kDataLoss);
  proto.set_hash_algorithm(static_cast<verity::v1::HashAlgorithm>(3));
  EXPECT_EQ(DescriptorFromProto(proto).status().code(), StatusCode::kDataLoss);
  proto.set_hash_algorithm(verity::v1::SHA256);
  proto.set_log_block_size(256);
  EXPECT_EQ(DescriptorFromProto(proto).status().code(), StatusCode::kDataLoss);
}

TEST(ProtoConvertTest, TreeParamsDefaultsAndLimits) {
  verity::v1::TreeParams proto;
  absl::StatusOr<MerkleParams> params = TreeParamsFromProto(proto);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params->hash_algorithm, HashAlgorithm::kSha256);
  EXPECT_EQ(params->block_size, 4096u);

  MerkleParams custom;
  custom.hash_algorithm = HashAlgorithm::kSha512;
  custom.block_size = 1024;
  custom.salt = "abc";
  params = TreeParamsFromProto(TreeParamsToProto(custom));
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params->hash_algorithm, custom.hash_algorithm);
  EXPECT_EQ(params->block_size, custom.block_size);
  EXPECT_EQ(params->salt, custom.salt);

  proto.set_block_size(1000);
  EXPECT_EQ(TreeParamsFromProto(proto).status().code(),
            StatusCode::kInvalidArgument);
  proto.set_block_size(0);
  proto.set_hash_algorithm(static_cast<verity::v1::HashAlgorithm>(9));
  EXPECT_EQ(TreeParamsFromProto(proto).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ProtoConvertTest, PriorityClassRoundTrips) {
  for (const PriorityClass priority : kAllPriorityClasses) {
    const verity::v1::PriorityClass proto = PriorityClassToProto(priority);
    EXPECT_EQ(static_cast<int>(proto), Index(priority));
    const absl::StatusOr<PriorityClass> back = PriorityClassFromProto(proto);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, priority);
  }
  EXPECT_EQ(PriorityClassToProto(PriorityClass::kRt),
            verity::v1::PRIORITY_CLASS_RT);
  EXPECT_EQ(PriorityClassFromProto(4).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(PriorityClassFromProto(-1).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace verity
