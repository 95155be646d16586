// TileCache: a tile or bundle is read from below once while it is kept; the
// checkpoint and the state every time; a missing tile is not remembered as
// missing; the budget holds.

#include "lib/tlog/tile_cache.h"

#include <atomic>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "lib/tlog/memory_log_storage.h"

namespace verity::tlog {
namespace {

// Counts the reads that reach it.
class CountingStorage : public LogStorage {
 public:
  absl::StatusOr<std::string> Read(absl::string_view path) const override {
    ++reads;
    return memory.Read(path);
  }
  absl::Status Write(absl::string_view path, absl::string_view bytes) override {
    return memory.Write(path, bytes);
  }
  absl::Status Delete(absl::string_view path) override {
    return memory.Delete(path);
  }
  absl::StatusOr<std::optional<Record>> ReadState() const override {
    ++reads;
    return memory.ReadState();
  }
  absl::StatusOr<Record> WriteState(
      absl::string_view body,
      const std::optional<std::string>& expected) override {
    return memory.WriteState(body, expected);
  }

  MemoryLogStorage memory;
  mutable std::atomic<int> reads{0};
};

TEST(TileCacheTest, ReadsEachTileFromBelowOnce) {
  auto below = std::make_shared<CountingStorage>();
  TileCache cache(below, 1 << 20);
  ASSERT_TRUE(cache.Write("tile/0/000", std::string(8192, 'a')).ok());
  ASSERT_TRUE(cache.Write("tile/entries/000.p/3", "bundle").ok());
  ASSERT_TRUE(cache.Write("checkpoint", "note").ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(*cache.Read("tile/0/000"), std::string(8192, 'a'));
    EXPECT_EQ(*cache.Read("tile/entries/000.p/3"), "bundle");
  }
  EXPECT_EQ(below->reads, 2);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(*cache.Read("checkpoint"), "note");
  EXPECT_EQ(below->reads, 5);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(TileCacheTest, AMissingTileIsAskedForAgain) {
  auto below = std::make_shared<CountingStorage>();
  TileCache cache(below, 1 << 20);
  EXPECT_TRUE(absl::IsNotFound(cache.Read("tile/0/001").status()));
  ASSERT_TRUE(cache.Write("tile/0/001", "now here").ok());
  EXPECT_EQ(*cache.Read("tile/0/001"), "now here");
  EXPECT_EQ(below->reads, 2);
}

TEST(TileCacheTest, KeepsWithinItsBudget) {
  auto below = std::make_shared<CountingStorage>();
  TileCache cache(below, 3 * 8300);
  for (int i = 0; i < 10; ++i) {
    const std::string path = "tile/0/00" + std::to_string(i);
    ASSERT_TRUE(cache.Write(path, std::string(8192, 'x')).ok());
    ASSERT_TRUE(cache.Read(path).ok());
  }
  EXPECT_EQ(cache.size(), 3u);
}

}  // namespace
}  // namespace verity::tlog
