// Tile paths, the tiles of a tree size and entry bundles, as C2SP
// tlog-tiles writes them.

#include "lib/tlog/tiles.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace verity::tlog {
namespace {

TEST(TilesTest, Paths) {
  EXPECT_EQ((TileId{0, 0}).Path(), "tile/0/000");
  EXPECT_EQ((TileId{1, 1234067}).Path(), "tile/1/x001/x234/067");
  EXPECT_EQ((TileId{2, 1000, 17}).Path(), "tile/2/x001/000.p/17");
  EXPECT_EQ((TileId{TileId::kEntries, 5, 1}).Path(), "tile/entries/005.p/1");
  EXPECT_EQ((TileId{TileId::kEntries, 999}).Path(), "tile/entries/999");
}

TEST(TilesTest, TheTilesOfATreeSize) {
  // tlog-tiles' example: 70,000 entries have 273 full level-0 tiles and a
  // partial one of 112, a full level-1 tile and a partial one of 17, and a
  // partial level-2 tile of 1.
  std::vector<std::string> partial;
  for (const TileId& id : PartialTiles(70000)) partial.push_back(id.Path());
  EXPECT_EQ(partial, (std::vector<std::string>{
                         "tile/entries/273.p/112", "tile/0/273.p/112",
                         "tile/1/001.p/17", "tile/2/000.p/1"}));
  absl::StatusOr<TileId> full = TileFor(0, 272 * 256 + 5, 70000);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->Path(), "tile/0/272");
  EXPECT_EQ(TileFor(1, 256, 70000)->Path(), "tile/1/001.p/17");
  EXPECT_EQ(TileFor(1, 273, 70000).status().code(),
            absl::StatusCode::kNotFound);
  // 256 entries: a full level-0 tile and a partial level-1 tile of 1.
  partial.clear();
  for (const TileId& id : PartialTiles(256)) partial.push_back(id.Path());
  EXPECT_EQ(partial, (std::vector<std::string>{"tile/1/000.p/1"}));
  EXPECT_TRUE(PartialTiles(0).empty());
}

TEST(TilesTest, EntryBundles) {
  std::string bundle;
  ASSERT_TRUE(AppendToBundle("", bundle).ok());
  ASSERT_TRUE(AppendToBundle("abc", bundle).ok());
  ASSERT_TRUE(AppendToBundle(std::string(300, 'x'), bundle).ok());
  EXPECT_EQ(bundle.substr(0, 7), std::string("\0\0\0\x03"
                                             "abc",
                                             7));
  EXPECT_EQ(bundle.substr(7, 2), "\x01\x2c");
  absl::StatusOr<std::vector<std::string>> entries = SplitBundle(bundle);
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(*entries,
            (std::vector<std::string>{"", "abc", std::string(300, 'x')}));
  EXPECT_FALSE(SplitBundle(bundle.substr(0, bundle.size() - 1)).ok());
  EXPECT_FALSE(SplitBundle("\x01").ok());
  EXPECT_FALSE(AppendToBundle(std::string(65536, 'x'), bundle).ok());
}

TEST(TilesTest, TileBytes) {
  const std::vector<LogHash> hashes = {LeafHash("a"), LeafHash("b")};
  const std::string bytes = JoinTile(hashes);
  EXPECT_EQ(bytes.size(), 64u);
  EXPECT_EQ(*SplitTile(bytes, 2), hashes);
  EXPECT_EQ(SplitTile(bytes, 3).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(CompleteTreeHash(hashes), NodeHash(hashes[0], hashes[1]));
}

TEST(TilesTest, ATileTreeHoldsEverySubtreeWithinTheTile) {
  for (int width : {1, 2, 3, 100, 255, 256}) {
    std::vector<LogHash> hashes(width);
    for (int i = 0; i < width; ++i) hashes[i] = LeafHash(std::to_string(i));
    const TileTree tree(hashes);
    EXPECT_EQ(tree.width(), static_cast<size_t>(width));
    for (int rest = 0; (1 << rest) <= width; ++rest) {
      for (int offset = 0; offset + (1 << rest) <= width; offset += 1 << rest) {
        EXPECT_EQ(tree.Subtree(rest, offset),
                  CompleteTreeHash(absl::MakeConstSpan(hashes).subspan(
                      offset, size_t{1} << rest)))
            << width << " " << rest << " " << offset;
      }
    }
  }
  EXPECT_TRUE(
      absl::IsDataLoss(ParseTileTree(std::string(33, 'x'), 1).status()));
  EXPECT_EQ((*ParseTileTree(std::string(64, 'x'), 2))->width(), 2u);
}

}  // namespace
}  // namespace verity::tlog
