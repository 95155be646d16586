// SplitRange covers the range exactly, cuts only on block boundaries, and
// balances the parts.

#include "client/sdk/parallel_fetch.h"

#include <vector>

#include "gtest/gtest.h"

namespace verity::client {
namespace {

void ExpectTiling(uint64_t begin, uint64_t end, uint32_t block, int n) {
  const std::vector<Part> parts = SplitRange(begin, end, block, n);
  ASSERT_FALSE(parts.empty());
  EXPECT_LE(parts.size(), static_cast<size_t>(n));
  EXPECT_EQ(parts.front().begin, begin);
  EXPECT_EQ(parts.back().end, end);
  uint64_t min_blocks = UINT64_MAX, max_blocks = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_LT(parts[i].begin, parts[i].end);
    if (i > 0) {
      EXPECT_EQ(parts[i].begin, parts[i - 1].end);
      EXPECT_EQ(parts[i].begin % block, 0u);
    }
    const uint64_t blocks = (parts[i].end - 1) / block - parts[i].begin / block;
    min_blocks = std::min(min_blocks, blocks);
    max_blocks = std::max(max_blocks, blocks);
  }
  EXPECT_LE(max_blocks - min_blocks, 1u);
}

TEST(SplitRangeTest, TilesTheRangeOnBlockBoundaries) {
  ExpectTiling(0, 1 << 20, 4096, 4);
  ExpectTiling(5, (1 << 20) - 3, 4096, 3);
  ExpectTiling(4095, 4097, 4096, 8);
  ExpectTiling(100, 50000, 1024, 7);
  ExpectTiling(0, 1, 4096, 2);
}

TEST(SplitRangeTest, NoMorePartsThanBlocks) {
  EXPECT_EQ(SplitRange(10, 20, 4096, 8).size(), 1u);
  EXPECT_EQ(SplitRange(4000, 4200, 4096, 8).size(), 2u);
  EXPECT_EQ(SplitRange(0, 3 * 4096, 4096, 8).size(), 3u);
  EXPECT_EQ(SplitRange(0, 1000 * 4096, 4096, 1000).size(),
            static_cast<size_t>(kMaxParts));
}

TEST(SplitRangeTest, EmptyRangeHasNoParts) {
  EXPECT_TRUE(SplitRange(7, 7, 4096, 4).empty());
}

TEST(SplitRangeTest, EqualParts) {
  const std::vector<Part> parts = SplitRange(0, 8 * 4096, 4096, 4);
  ASSERT_EQ(parts.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(parts[i].begin, i * 2 * 4096);
    EXPECT_EQ(parts[i].end, (i + 1) * 2 * 4096);
  }
}

TEST(SplitRangeTest, HugeRangesDoNotOverflow) {
  const uint64_t end = (uint64_t{1} << 63) - 1;
  ExpectTiling(0, end, 64, 64);
  ExpectTiling(end - 100000, end, 65536, 5);
}

}  // namespace
}  // namespace verity::client
