// LogAppender: batches of entries make the tiles C2SP tlog-tiles has, whose
// hashes prove every entry and every earlier size; an appender resumed from
// the tiles goes on as if it had never stopped, and refuses tiles that do
// not hash to the checkpoint.

#include "lib/tlog/log_appender.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace verity::tlog {
namespace {

// The log's files: tile path -> bytes.
using Files = std::map<std::string, std::string>;

TileSource From(const Files& files) {
  return [&files](const TileId& id) -> absl::StatusOr<std::string> {
    auto it = files.find(id.Path());
    if (it == files.end()) return absl::NotFoundError(id.Path());
    return it->second;
  };
}

std::vector<std::string> Batch(uint64_t first, uint64_t count) {
  std::vector<std::string> entries;
  for (uint64_t i = first; i < first + count; ++i) {
    entries.push_back(absl::StrCat("statement ", i));
  }
  return entries;
}

void Write(const std::vector<TileBytes>& tiles, Files& files) {
  for (const TileBytes& tile : tiles) {
    auto [it, added] = files.emplace(tile.id.Path(), tile.bytes);
    // A tile path is written once: tiles are immutable.
    EXPECT_TRUE(added || it->second == tile.bytes) << tile.id.Path();
  }
}

TEST(LogAppenderTest, TilesProveEveryEntryAndEverySize) {
  LogAppender appender;
  Files files;
  std::vector<std::pair<uint64_t, LogHash>> checkpoints = {
      {0, EmptyTreeHash()}};
  EXPECT_EQ(appender.Root(), EmptyTreeHash());
  // Batches that end inside, at and across tile edges, up to two levels.
  for (uint64_t count : {1, 254, 1, 1, 300, 65000, 2, 1000}) {
    absl::StatusOr<std::vector<TileBytes>> tiles =
        appender.Append(Batch(appender.size(), count));
    ASSERT_TRUE(tiles.ok()) << tiles.status();
    Write(*tiles, files);
    checkpoints.push_back({appender.size(), appender.Root()});
  }
  const uint64_t size = appender.size();
  ASSERT_EQ(size, 66559u);
  EXPECT_TRUE(files.count("tile/entries/259.p/255"));
  EXPECT_TRUE(files.count("tile/1/001.p/3"));
  EXPECT_TRUE(files.count("tile/2/000.p/1"));
  // Each checkpoint's root from its own tiles, each entry in the last one,
  // each earlier checkpoint consistent with the last.
  const LogHash root = appender.Root();
  for (const auto& [old_size, old_root] : checkpoints) {
    TileHashReader reader(old_size, From(files));
    ASSERT_EQ(*TreeHash(old_size, reader), old_root) << old_size;
    if (old_size == 0) continue;
    TileHashReader latest(size, From(files));
    absl::StatusOr<std::vector<LogHash>> proof =
        ConsistencyProof(old_size, size, latest);
    ASSERT_TRUE(proof.ok()) << proof.status();
    EXPECT_TRUE(VerifyConsistency(old_size, size, old_root, root, *proof).ok());
  }
  TileHashReader reader(size, From(files));
  for (uint64_t index : {0, 255, 256, 65535, 65536, 66558}) {
    absl::StatusOr<std::vector<LogHash>> proof =
        InclusionProof(index, size, reader);
    ASSERT_TRUE(proof.ok()) << proof.status();
    EXPECT_TRUE(VerifyInclusion(index, size,
                                LeafHash(absl::StrCat("statement ", index)),
                                *proof, root)
                    .ok())
        << index;
  }
  // The entries are in their bundles.
  absl::StatusOr<std::vector<std::string>> bundle =
      SplitBundle(files.at("tile/entries/001"));
  ASSERT_TRUE(bundle.ok());
  EXPECT_EQ((*bundle)[0], "statement 256");
}

TEST(LogAppenderTest, AResumedAppenderGoesOnAsBefore) {
  LogAppender straight;
  Files files;
  for (uint64_t count : {300, 40}) {
    Write(*straight.Append(Batch(straight.size(), count)), files);
  }
  absl::StatusOr<LogAppender> resumed =
      LogAppender::Resume(straight.size(), straight.Root(), From(files));
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->Root(), straight.Root());
  for (uint64_t count : {500, 1}) {
    Files ignored;
    Write(*straight.Append(Batch(straight.size(), count)), ignored);
    Write(*resumed->Append(Batch(resumed->size(), count)), files);
    EXPECT_EQ(resumed->Root(), straight.Root());
  }
}

TEST(LogAppenderTest, ResumeRefusesTilesThatDoNotHashToTheRoot) {
  LogAppender appender;
  Files files;
  Write(*appender.Append(Batch(0, 300)), files);
  const LogHash root = appender.Root();
  // A changed entry in the partial bundle, a changed partial tile, another
  // root, a missing tile.
  Files changed = files;
  changed["tile/entries/001.p/44"][5] ^= 1;
  EXPECT_EQ(LogAppender::Resume(300, root, From(changed)).status().code(),
            absl::StatusCode::kDataLoss);
  changed = files;
  changed["tile/0/001.p/44"][0] ^= 1;
  EXPECT_EQ(LogAppender::Resume(300, root, From(changed)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(
      LogAppender::Resume(300, LeafHash("x"), From(files)).status().code(),
      absl::StatusCode::kDataLoss);
  changed = files;
  changed.erase("tile/1/000.p/1");
  EXPECT_EQ(LogAppender::Resume(300, root, From(changed)).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(LogAppenderTest, AnEntryTooLongForABundleAppendsNothing) {
  LogAppender appender;
  ASSERT_TRUE(appender.Append(Batch(0, 3)).ok());
  const LogHash root = appender.Root();
  std::vector<std::string> entries = {"fine", std::string(70000, 'x')};
  EXPECT_EQ(appender.Append(entries).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(appender.size(), 3u);
  EXPECT_EQ(appender.Root(), root);
}

}  // namespace
}  // namespace verity::tlog
