#include "server/rpc/chunk_window.h"

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(ChunkWindowTest, StartsAtTheMinimum) {
  EXPECT_EQ(ChunkWindow(64, 256).blocks(), 64u);
}

TEST(ChunkWindowTest, DoublesWhileTheClientWaitsUpToTheMaximum) {
  ChunkWindow window(64, 256);
  window.OnChunkRead(true);
  EXPECT_EQ(window.blocks(), 128u);
  window.OnChunkRead(true);
  EXPECT_EQ(window.blocks(), 256u);
  window.OnChunkRead(true);
  EXPECT_EQ(window.blocks(), 256u);
}

TEST(ChunkWindowTest, HalvesWhileTheClientIsBehindDownToTheMinimum) {
  ChunkWindow window(64, 256);
  window.OnChunkRead(true);
  window.OnChunkRead(true);
  window.OnChunkRead(false);
  EXPECT_EQ(window.blocks(), 128u);
  window.OnChunkRead(false);
  window.OnChunkRead(false);
  EXPECT_EQ(window.blocks(), 64u);
}

TEST(ChunkWindowTest, BoundsAreAtLeastOneBlockAndOrdered) {
  ChunkWindow window(0, 0);
  EXPECT_EQ(window.blocks(), 1u);
  window.OnChunkRead(true);
  EXPECT_EQ(window.blocks(), 1u);
  ChunkWindow inverted(8, 2);
  inverted.OnChunkRead(true);
  EXPECT_EQ(inverted.blocks(), 8u);
}

}  // namespace
}  // namespace verity::server
