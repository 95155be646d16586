// Tests parameter validation and the tree geometry for boundary sizes.

#include "lib/tree/merkle_params.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace verity {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kHpb = kBlock / 32;  // SHA-256 hashes per 4K block

TreeGeometry Geometry(uint64_t data_size, MerkleParams params = {}) {
  absl::StatusOr<TreeGeometry> geometry =
      TreeGeometry::Create(params, data_size);
  EXPECT_TRUE(geometry.ok()) << geometry.status();
  return *geometry;
}

TEST(MerkleParamsTest, DefaultsAreValid) {
  EXPECT_TRUE(ValidateMerkleParams(MerkleParams{}).ok());
  const TreeGeometry g = Geometry(0);
  EXPECT_EQ(g.block_size(), 4096u);
  EXPECT_EQ(g.log_block_size(), 12);
  EXPECT_EQ(g.digest_size(), 32u);
  EXPECT_EQ(g.hashes_per_block(), 128u);
}

TEST(MerkleParamsTest, RejectsBadBlockSizes) {
  MerkleParams params;
  for (uint32_t size : {0u, 1000u, 4097u, 32u, 1u << 31}) {
    params.block_size = size;
    EXPECT_EQ(ValidateMerkleParams(params).code(),
              absl::StatusCode::kInvalidArgument)
        << size;
  }
  params.hash_algorithm = HashAlgorithm::kSha512;
  params.block_size = 64;  // holds only one SHA-512 hash
  EXPECT_EQ(ValidateMerkleParams(params).code(),
            absl::StatusCode::kInvalidArgument);
  params.block_size = 128;
  EXPECT_TRUE(ValidateMerkleParams(params).ok());
  params.block_size = kMaxBlockSize;
  EXPECT_TRUE(ValidateMerkleParams(params).ok());
}

TEST(MerkleParamsTest, RejectsLongSaltAndUnknownAlgorithm) {
  MerkleParams params;
  params.salt = std::string(32, 's');
  EXPECT_TRUE(ValidateMerkleParams(params).ok());
  params.salt = std::string(33, 's');
  EXPECT_EQ(ValidateMerkleParams(params).code(),
            absl::StatusCode::kInvalidArgument);
  params.salt.clear();
  params.hash_algorithm = static_cast<HashAlgorithm>(3);
  EXPECT_EQ(ValidateMerkleParams(params).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TreeGeometryTest, AtMostOneBlockHasNoTree) {
  for (uint64_t size : {uint64_t{0}, uint64_t{1}, kBlock - 1, kBlock}) {
    const TreeGeometry g = Geometry(size);
    EXPECT_EQ(g.data_block_count(), size == 0 ? 0u : 1u) << size;
    EXPECT_EQ(g.num_levels(), 0) << size;
    EXPECT_EQ(g.tree_size(), 0u) << size;
  }
}

TEST(TreeGeometryTest, OneLevel) {
  for (uint64_t size : {kBlock + 1, kHpb * kBlock - 1, kHpb * kBlock}) {
    const TreeGeometry g = Geometry(size);
    EXPECT_EQ(g.num_levels(), 1) << size;
    EXPECT_EQ(g.level_block_count(0), 1u) << size;
    EXPECT_EQ(g.level_offset(0), 0u) << size;
    EXPECT_EQ(g.tree_size(), kBlock) << size;
  }
  EXPECT_EQ(Geometry(kBlock + 1).data_block_count(), 2u);
  EXPECT_EQ(Geometry(kHpb * kBlock).data_block_count(), kHpb);
}

TEST(TreeGeometryTest, TwoLevels) {
  const TreeGeometry g = Geometry(kHpb * kBlock + 1);
  EXPECT_EQ(g.data_block_count(), kHpb + 1);
  ASSERT_EQ(g.num_levels(), 2);
  EXPECT_EQ(g.level_block_count(0), 2u);
  EXPECT_EQ(g.level_block_count(1), 1u);
  EXPECT_EQ(g.level_offset(1), 0u);  // top level first
  EXPECT_EQ(g.level_offset(0), kBlock);
  EXPECT_EQ(g.tree_size(), 3 * kBlock);
}

TEST(TreeGeometryTest, ThreeLevels) {
  const TreeGeometry g = Geometry(kHpb * kHpb * kBlock + 1);
  ASSERT_EQ(g.num_levels(), 3);
  EXPECT_EQ(g.level_block_count(0), kHpb + 1);
  EXPECT_EQ(g.level_block_count(1), 2u);
  EXPECT_EQ(g.level_block_count(2), 1u);
  EXPECT_EQ(g.level_offset(2), 0u);
  EXPECT_EQ(g.level_offset(1), kBlock);
  EXPECT_EQ(g.level_offset(0), 3 * kBlock);
  EXPECT_EQ(g.tree_size(), (kHpb + 4) * kBlock);
  EXPECT_EQ(g.level_block_count(3), 0u);
  EXPECT_EQ(g.level_block_count(-1), 0u);
}

TEST(TreeGeometryTest, HashLocations) {
  const TreeGeometry g = Geometry(kHpb * kHpb * kBlock + 1);
  absl::StatusOr<HashLocation> data = g.DataBlockHashLocation(kHpb + 3);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_FALSE(data->is_root);
  EXPECT_EQ(data->level, 0);
  EXPECT_EQ(data->block_index, 1u);
  EXPECT_EQ(data->slot, 3u);
  EXPECT_EQ(data->tree_offset, 3 * kBlock + kBlock + 3 * 32);

  absl::StatusOr<HashLocation> tree = g.TreeBlockHashLocation(0, kHpb);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->level, 1);
  EXPECT_EQ(tree->block_index, 1u);
  EXPECT_EQ(tree->slot, 0u);
  EXPECT_EQ(tree->tree_offset, 2 * kBlock);

  absl::StatusOr<HashLocation> top = g.TreeBlockHashLocation(2, 0);
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_TRUE(top->is_root);
}

TEST(TreeGeometryTest, SingleDataBlockHashesToRoot) {
  absl::StatusOr<HashLocation> location = Geometry(5).DataBlockHashLocation(0);
  ASSERT_TRUE(location.ok()) << location.status();
  EXPECT_TRUE(location->is_root);
}

TEST(TreeGeometryTest, OutOfRangeBlocks) {
  const TreeGeometry g = Geometry(kHpb * kBlock + 1);
  EXPECT_EQ(g.DataBlockHashLocation(kHpb + 1).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(g.TreeBlockHashLocation(0, 2).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(g.TreeBlockHashLocation(2, 0).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(g.TreeBlockHashLocation(-1, 0).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Geometry(0).DataBlockHashLocation(0).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST(TreeGeometryTest, HostileSizesFailCleanly) {
  EXPECT_EQ(TreeGeometry::Create(MerkleParams{}, ~uint64_t{0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      TreeGeometry::Create(MerkleParams{}, kMaxDataSize + 1).status().code(),
      absl::StatusCode::kInvalidArgument);
  // The largest size with the deepest tree (two hashes per block) works.
  MerkleParams params;
  params.block_size = 64;
  const TreeGeometry g = Geometry(kMaxDataSize, params);
  EXPECT_EQ(g.data_block_count(), uint64_t{1} << 57);
  EXPECT_EQ(g.num_levels(), 57);
  EXPECT_GT(g.tree_size(), kMaxDataSize / 2);
  EXPECT_EQ(g.level_block_count(g.num_levels() - 1), 1u);
}

TEST(TreeGeometryTest, LargestBlock) {
  MerkleParams params;
  params.block_size = kMaxBlockSize;
  const TreeGeometry g = Geometry(kMaxDataSize, params);
  EXPECT_EQ(g.log_block_size(), 30);
  EXPECT_EQ(g.num_levels(), 2);
}

TEST(TreeGeometryTest, OrdinalsFollowTheSerializedLayout) {
  // Three levels: 1 top block, then 3, then 257 (2 * 128 * 128 + 1 blocks).
  const TreeGeometry g = Geometry((2 * kHpb * kHpb + 1) * kBlock);
  ASSERT_EQ(g.num_levels(), 3);
  EXPECT_EQ(g.Ordinal({2, 0}), 0u);
  EXPECT_EQ(g.Ordinal({1, 2}), 3u);
  EXPECT_EQ(g.Ordinal({0, 0}), 4u);
  for (uint64_t ordinal = 0; ordinal < g.tree_size() / kBlock; ++ordinal) {
    absl::StatusOr<TreeBlockId> id = g.BlockAtOrdinal(ordinal);
    ASSERT_TRUE(id.ok()) << ordinal;
    EXPECT_TRUE(g.Contains(*id));
    EXPECT_EQ(g.Ordinal(*id), ordinal);
  }
  EXPECT_EQ(g.BlockAtOrdinal(g.tree_size() / kBlock).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_FALSE(g.Contains({3, 0}));
  EXPECT_FALSE(g.Contains({-1, 0}));
  EXPECT_FALSE(g.Contains({1, 3}));
}

TEST(TreeGeometryTest, CoveringTreeBlocksTopDown) {
  const TreeGeometry g = Geometry((2 * kHpb * kHpb + 1) * kBlock);
  const std::vector<TreeBlockSpan> spans =
      g.CoveringTreeBlocks(kHpb * kHpb - 1, kHpb * kHpb + 1);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].level, 2);
  EXPECT_EQ(spans[0].first, 0u);
  EXPECT_EQ(spans[0].last, 0u);
  EXPECT_EQ(spans[1].level, 1);
  EXPECT_EQ(spans[1].first, 0u);
  EXPECT_EQ(spans[1].last, 1u);
  EXPECT_EQ(spans[2].level, 0);
  EXPECT_EQ(spans[2].first, kHpb - 1);
  EXPECT_EQ(spans[2].last, kHpb);
  EXPECT_TRUE(g.CoveringTreeBlocks(5, 5).empty());
  EXPECT_TRUE(g.CoveringTreeBlocks(g.data_block_count(), ~uint64_t{0}).empty());
  EXPECT_TRUE(Geometry(100).CoveringTreeBlocks(0, 1).empty());  // no tree
}

}  // namespace
}  // namespace verity
