#include "server/rpc/chunk_window.h"

#include "gtest/gtest.h"

namespace verity::server {
namespace {

constexpr uint64_t kBlock = 4096;

TEST(ChunkWindowTest, StartsAtTheMinimum) {
  ByteBudget budget(1 << 20);
  EXPECT_EQ(ChunkWindow(64, 256, kBlock, &budget).blocks(), 64u);
}

TEST(ChunkWindowTest, DoublesWhileTheClientWaitsUpToTheMaximum) {
  ByteBudget budget(1 << 30);
  ChunkWindow window(64, 256, kBlock, &budget);
  window.OnChunkRead(true);
  EXPECT_EQ(window.blocks(), 128u);
  window.OnChunkRead(true);
  EXPECT_EQ(window.blocks(), 256u);
  window.OnChunkRead(true);
  EXPECT_EQ(window.blocks(), 256u);
  EXPECT_EQ(budget.left(), (1u << 30) - (256 - 64) * kBlock);
}

TEST(ChunkWindowTest, HalvesWhileTheClientIsBehindDownToTheMinimum) {
  ByteBudget budget(1 << 30);
  ChunkWindow window(64, 256, kBlock, &budget);
  window.OnChunkRead(true);
  window.OnChunkRead(true);
  window.OnChunkRead(false);
  EXPECT_EQ(window.blocks(), 128u);
  EXPECT_EQ(budget.left(), (1u << 30) - 64 * kBlock);
  window.OnChunkRead(false);
  window.OnChunkRead(false);
  EXPECT_EQ(window.blocks(), 64u);
  EXPECT_EQ(budget.left(), 1u << 30);
}

TEST(ChunkWindowTest, StreamsShareTheBudgetAndGiveItBack) {
  ByteBudget budget(64 * kBlock);
  {
    ChunkWindow first(64, 256, kBlock, &budget);
    ChunkWindow second(64, 256, kBlock, &budget);
    first.OnChunkRead(true);
    EXPECT_EQ(first.blocks(), 128u);
    EXPECT_EQ(budget.left(), 0u);
    // Nothing left: the second stream stays at its minimum, and the first
    // cannot grow further.
    second.OnChunkRead(true);
    EXPECT_EQ(second.blocks(), 64u);
    first.OnChunkRead(true);
    EXPECT_EQ(first.blocks(), 128u);
  }
  EXPECT_EQ(budget.left(), 64 * kBlock);
}

TEST(ChunkWindowTest, BoundsAreAtLeastOneBlockAndOrdered) {
  ByteBudget budget(1 << 20);
  ChunkWindow window(0, 0, kBlock, &budget);
  EXPECT_EQ(window.blocks(), 1u);
  window.OnChunkRead(true);
  EXPECT_EQ(window.blocks(), 1u);
  ChunkWindow inverted(8, 2, kBlock, &budget);
  inverted.OnChunkRead(true);
  EXPECT_EQ(inverted.blocks(), 8u);
  EXPECT_EQ(budget.left(), 1u << 20);
}

}  // namespace
}  // namespace verity::server
