// Tests the read arithmetic at the edges: empty, unaligned and final ranges,
// overflow, and the tree blocks a stream carries chunk by chunk.

#include "lib/tree/read_plan.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace verity {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kHpb = kBlock / 32;  // SHA-256 hashes per 4 KiB block

TreeGeometry Geometry(uint64_t data_size) {
  absl::StatusOr<TreeGeometry> geometry =
      TreeGeometry::Create(MerkleParams{}, data_size);
  EXPECT_TRUE(geometry.ok()) << geometry.status();
  return *geometry;
}

MATCHER_P2(Range, begin, end, "") {
  return arg.ok() && arg->begin == static_cast<uint64_t>(begin) &&
         arg->end == static_cast<uint64_t>(end);
}

TEST(CheckByteRangeTest, AcceptsRangesInsideTheBlob) {
  EXPECT_THAT(CheckByteRange(100, 0, std::nullopt), Range(0, 100));
  EXPECT_THAT(CheckByteRange(100, 40, std::nullopt), Range(40, 100));
  EXPECT_THAT(CheckByteRange(100, 40, 60), Range(40, 100));
  EXPECT_THAT(CheckByteRange(100, 100, std::nullopt), Range(100, 100));
  EXPECT_THAT(CheckByteRange(100, 100, 0), Range(100, 100));
  EXPECT_THAT(CheckByteRange(0, 0, std::nullopt), Range(0, 0));
}

TEST(CheckByteRangeTest, AnythingOutsideTheBlobIsOutOfRange) {
  EXPECT_EQ(CheckByteRange(100, 101, std::nullopt).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(CheckByteRange(100, 101, UINT64_MAX).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(CheckByteRange(100, 1, UINT64_MAX).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(CheckByteRange(100, 40, 61).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(CheckByteRange(UINT64_MAX, UINT64_MAX, 0).ok());
}

TEST(ValidateRangeTest, OnlyOverflowIsMalformed) {
  EXPECT_TRUE(ValidateRange(0, std::nullopt).ok());
  EXPECT_TRUE(ValidateRange(UINT64_MAX, std::nullopt).ok());
  EXPECT_TRUE(ValidateRange(UINT64_MAX, 0).ok());
  EXPECT_TRUE(ValidateRange(1, UINT64_MAX - 1).ok());
  EXPECT_EQ(ValidateRange(1, UINT64_MAX).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateRange(UINT64_MAX, 1).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(BlocksOfTest, CoversEveryByteOfTheRange) {
  const TreeGeometry g = Geometry(10 * kBlock + 5);
  auto blocks = [&g](uint64_t begin, uint64_t end) {
    const BlockRange b = BlocksOf(g, {begin, end});
    return std::vector<uint64_t>{b.first, b.end};
  };
  EXPECT_THAT(blocks(0, 10 * kBlock + 5), ElementsAre(0, 11));
  EXPECT_THAT(blocks(kBlock, 2 * kBlock), ElementsAre(1, 2));
  EXPECT_THAT(blocks(kBlock - 1, kBlock + 1), ElementsAre(0, 2));
  EXPECT_THAT(blocks(10 * kBlock, 10 * kBlock + 5), ElementsAre(10, 11));
  // Empty: no blocks, positioned at the start's block.
  EXPECT_THAT(blocks(3 * kBlock + 7, 3 * kBlock + 7), ElementsAre(3, 3));
  EXPECT_TRUE(BlocksOf(g, {5, 5}).empty());
}

TEST(FitsSmallReadTest, CountsTheBlocksTheRangeTouches) {
  const uint64_t limit = kMaxSmallReadBytes / kBlock;  // blocks
  const TreeGeometry g = Geometry(4 * limit * kBlock);
  EXPECT_TRUE(FitsSmallRead(g, {0, 0}));
  EXPECT_TRUE(FitsSmallRead(g, {0, kMaxSmallReadBytes}));
  EXPECT_TRUE(FitsSmallRead(g, {kBlock, kBlock + kMaxSmallReadBytes}));
  EXPECT_FALSE(FitsSmallRead(g, {0, kMaxSmallReadBytes + 1}));
  // Fewer bytes than the limit, but one more block once rounded out.
  EXPECT_FALSE(FitsSmallRead(g, {1, kMaxSmallReadBytes + 1}));
  EXPECT_TRUE(FitsSmallRead(g, {1, kMaxSmallReadBytes}));
  // The last block is short: the range still counts whole blocks.
  const TreeGeometry tail = Geometry(limit * kBlock + 1);
  EXPECT_FALSE(FitsSmallRead(tail, {0, limit * kBlock + 1}));
  EXPECT_TRUE(FitsSmallRead(tail, {kBlock, limit * kBlock + 1}));
}

TEST(BytesOfTest, CutsTheLastBlockAtTheEndOfTheData) {
  const TreeGeometry g = Geometry(10 * kBlock + 5);
  const ByteRange all = BytesOf(g, {0, 11});
  EXPECT_EQ(all.begin, 0u);
  EXPECT_EQ(all.end, 10 * kBlock + 5);
  const ByteRange one = BytesOf(g, {2, 3});
  EXPECT_EQ(one.begin, 2 * kBlock);
  EXPECT_EQ(one.end, 3 * kBlock);
  EXPECT_TRUE(BytesOf(g, {11, 12}).empty());
}

TEST(TreeBlocksForTest, TopLevelFirst) {
  // Two levels: kHpb + 1 level-0 blocks under one level-1 block.
  const TreeGeometry g = Geometry((kHpb * kHpb + 1) * kBlock);
  ASSERT_EQ(g.num_levels(), 3);
  EXPECT_THAT(
      TreeBlocksFor(g, {0, 1}),
      ElementsAre(TreeBlockId{2, 0}, TreeBlockId{1, 0}, TreeBlockId{0, 0}));
  // The last data block alone: the second block of each lower level.
  EXPECT_THAT(
      TreeBlocksFor(g, {kHpb * kHpb, kHpb * kHpb + 1}),
      ElementsAre(TreeBlockId{2, 0}, TreeBlockId{1, 1}, TreeBlockId{0, kHpb}));
  EXPECT_THAT(TreeBlocksFor(g, {kHpb - 1, kHpb + 1}),
              ElementsAre(TreeBlockId{2, 0}, TreeBlockId{1, 0},
                          TreeBlockId{0, 0}, TreeBlockId{0, 1}));
  EXPECT_THAT(TreeBlocksFor(g, {3, 3}), IsEmpty());
  EXPECT_THAT(TreeBlocksFor(g, {kHpb * kHpb + 1, kHpb * kHpb + 9}), IsEmpty());
  // One data block: its hash is the root hash, there is no tree.
  EXPECT_THAT(TreeBlocksFor(Geometry(kBlock), {0, 1}), IsEmpty());
}

TEST(AuthenticatesTest, OnlyBlocksOnThePathOfTheRange) {
  const TreeGeometry g = Geometry(3 * kHpb * kBlock);
  ASSERT_EQ(g.num_levels(), 2);
  const BlockRange second{kHpb, 2 * kHpb};  // exactly level-0 block 1
  EXPECT_TRUE(Authenticates(g, {1, 0}, second));
  EXPECT_TRUE(Authenticates(g, {0, 1}, second));
  EXPECT_FALSE(Authenticates(g, {0, 0}, second));
  EXPECT_FALSE(Authenticates(g, {0, 2}, second));
  EXPECT_FALSE(Authenticates(g, {2, 0}, second));  // no such level
  EXPECT_FALSE(Authenticates(g, {0, 1}, {}));
}

TEST(ProofPlannerTest, EachNeededBlockOnceWithTheFirstChunkThatNeedsIt) {
  const TreeGeometry g = Geometry(3 * kHpb * kBlock);
  ProofPlanner planner(g);
  // The first chunk needs the top block and level-0 block 0.
  EXPECT_THAT(planner.ForChunk({0, 4}),
              ElementsAre(TreeBlockId{1, 0}, TreeBlockId{0, 0}));
  EXPECT_THAT(planner.ForChunk({4, 8}), IsEmpty());
  // Straddling level-0 blocks 0 and 1: only 1 is new.
  EXPECT_THAT(planner.ForChunk({kHpb - 2, kHpb + 2}),
              ElementsAre(TreeBlockId{0, 1}));
  EXPECT_THAT(planner.ForChunk({3 * kHpb - 1, 3 * kHpb}),
              ElementsAre(TreeBlockId{0, 2}));
}

TEST(ProofPlannerTest, SkipsWhatTheReaderHolds) {
  const TreeGeometry g = Geometry(3 * kHpb * kBlock);
  const uint64_t top = g.Ordinal({1, 0});
  const uint64_t second = g.Ordinal({0, 1});
  ProofPlanner planner(g, {top, second});
  EXPECT_THAT(planner.ForChunk({0, kHpb * 2}), ElementsAre(TreeBlockId{0, 0}));
  EXPECT_THAT(planner.ForChunk({kHpb * 2, kHpb * 3}),
              ElementsAre(TreeBlockId{0, 2}));
  ProofPlanner all = ProofPlanner::HoldingAll(g);
  EXPECT_THAT(all.ForChunk({0, 3 * kHpb}), IsEmpty());
}

TEST(ProofPlannerTest, ChunksTogetherCarryExactlyWhatTheRangeNeeds) {
  const TreeGeometry g = Geometry((kHpb * kHpb + 7) * kBlock + 1);
  const BlockRange range{kHpb - 3, kHpb * kHpb + 5};
  for (uint64_t chunk : {1u, 7u, 64u, 1000u}) {
    ProofPlanner planner(g);
    absl::flat_hash_set<uint64_t> carried;
    for (uint64_t b = range.first; b < range.end; b += chunk) {
      for (TreeBlockId id :
           planner.ForChunk({b, std::min(b + chunk, range.end)})) {
        EXPECT_TRUE(carried.insert(g.Ordinal(id)).second) << "sent twice";
      }
    }
    absl::flat_hash_set<uint64_t> needed;
    for (TreeBlockId id : TreeBlocksFor(g, range)) needed.insert(g.Ordinal(id));
    EXPECT_EQ(carried, needed) << chunk;
  }
}

}  // namespace
}  // namespace verity
