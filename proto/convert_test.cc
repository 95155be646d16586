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

Descriptor DmVerity() {
  Descriptor d;
  d.format = TreeFormat::kDmVerity;
  d.log_block_size = 12;
  d.salt = std::string(100, 's');
  d.data_size = 7 * 4096;
  d.root_hash = std::string(32, 'r');
  return d;
}

TEST(ProtoConvertTest, EachFormatTravelsInItsOwnField) {
  verity::v1::ReadResponse response;
  EXPECT_FALSE(HasDescriptor(response));
  EXPECT_EQ(DescriptorOf(response).status().code(),
            absl::StatusCode::kDataLoss);
  SetDescriptor(DmVerity(), &response);
  ASSERT_TRUE(response.has_dm_verity_descriptor());
  EXPECT_FALSE(response.has_fsverity_descriptor());
  EXPECT_EQ(response.dm_verity_descriptor().data_blocks(), 7u);
  EXPECT_EQ(response.dm_verity_descriptor().hash_block_size(), 4096u);
  absl::StatusOr<Descriptor> back = DescriptorOf(response);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, DmVerity());
  // Both at once is a lie.
  *response.mutable_fsverity_descriptor() = DescriptorToProto(DmVerity());
  EXPECT_EQ(DescriptorOf(response).status().code(),
            absl::StatusCode::kDataLoss);
  // Setting an fs-verity descriptor clears the other.
  Descriptor fs = DmVerity();
  fs.format = TreeFormat::kFsVerity;
  verity::v1::BlobInfo info;
  SetDescriptor(DmVerity(), &info);
  SetDescriptor(fs, &info);
  EXPECT_FALSE(info.has_dm_verity_descriptor());
  EXPECT_EQ(*DescriptorOf(info), fs);
}

TEST(ProtoConvertTest, DmVerityDescriptorsVeritydDoesNotStoreAreDataLoss) {
  verity::v1::DmVerityDescriptor proto = DmVerityDescriptorToProto(DmVerity());
  proto.set_hash_block_size(1024);
  EXPECT_EQ(DescriptorFromProto(proto).status().code(),
            absl::StatusCode::kDataLoss);
  proto = DmVerityDescriptorToProto(DmVerity());
  proto.set_hash_algorithm(verity::v1::HASH_ALGORITHM_UNSPECIFIED);
  EXPECT_EQ(DescriptorFromProto(proto).status().code(),
            absl::StatusCode::kDataLoss);
  proto = DmVerityDescriptorToProto(DmVerity());
  proto.set_data_blocks(uint64_t{1} << 62);  // overflows at 4 KiB blocks
  EXPECT_EQ(DescriptorFromProto(proto).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(ProtoConvertTest, TreeParamsCarryTheFormat) {
  MerkleParams params;
  params.format = TreeFormat::kDmVerity;
  params.salt = std::string(200, 'x');  // too long for fs-verity
  absl::StatusOr<MerkleParams> back =
      TreeParamsFromProto(TreeParamsToProto(params));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->format, TreeFormat::kDmVerity);
  verity::v1::TreeParams proto = TreeParamsToProto(params);
  proto.set_format(static_cast<verity::v1::TreeFormat>(7));
  EXPECT_EQ(TreeParamsFromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);
  proto.set_format(verity::v1::TREE_FORMAT_FSVERITY);
  EXPECT_EQ(TreeParamsFromProto(proto).status().code(),
            absl::StatusCode::kInvalidArgument);  // the salt
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
