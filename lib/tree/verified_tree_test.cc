// VerifiedTree: authenticated from the digest, blocks added once and top-down,
// data verified against them, and the same from many threads at once.

#include "lib/tree/verified_tree.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"

namespace verity {
namespace {

using ::absl::StatusCode;

constexpr uint32_t kBlock = 4096;

class VerifiedTreeTest : public ::testing::Test {
 protected:
  // 300 data blocks: two lowest-level tree blocks under one top block.
  VerifiedTreeTest()
      : blob_(MakeRandomTestBlob(300 * kBlock - 7,
                                 TestParams(HashAlgorithm::kSha256, kBlock))) {}

  std::shared_ptr<VerifiedTree> Tree() const {
    absl::StatusOr<std::shared_ptr<VerifiedTree>> tree =
        VerifiedTree::Create(blob_.tree.descriptor, blob_.digest);
    EXPECT_TRUE(tree.ok()) << tree.status();
    return tree.ok() ? *tree : nullptr;
  }

  absl::Span<const uint8_t> TreeBlock(const TreeGeometry& geometry,
                                      TreeBlockId id) const {
    return AsBytes(blob_.tree.tree)
        .subspan(geometry.Ordinal(id) * kBlock, kBlock);
  }

  absl::Span<const uint8_t> Data(uint64_t first, uint64_t end) const {
    const uint64_t begin = first * kBlock;
    return AsBytes(blob_.data)
        .subspan(begin,
                 std::min<uint64_t>(end * kBlock, blob_.data.size()) - begin);
  }

  TestBlob blob_;
};

TEST_F(VerifiedTreeTest, CreateAuthenticatesTheDescriptor) {
  ParsedDigest other = blob_.digest;
  other.digest[0] ^= 1;
  EXPECT_EQ(VerifiedTree::Create(blob_.tree.descriptor, other).status().code(),
            StatusCode::kDataLoss);
  VerifierOptions small;
  small.max_block_size = 1024;
  EXPECT_EQ(VerifiedTree::Create(blob_.tree.descriptor, blob_.digest, small)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  const std::shared_ptr<VerifiedTree> tree = Tree();
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(tree->digest(), blob_.digest);
  EXPECT_EQ(tree->descriptor(), blob_.tree.descriptor);
  EXPECT_EQ(tree->geometry().data_block_count(), 300u);
  EXPECT_EQ(tree->cached_bytes(), VerifiedTree::kTreeOverheadBytes);
}

TEST_F(VerifiedTreeTest, BlocksGoInTopDownAndOnce) {
  const std::shared_ptr<VerifiedTree> tree = Tree();
  const TreeGeometry& g = tree->geometry();
  ASSERT_EQ(g.num_levels(), 2);
  std::vector<TreeBlockId> missing = tree->Missing({0, 300});
  ASSERT_EQ(missing.size(), 4u);  // the top block, then three below it
  EXPECT_EQ(missing[0], (TreeBlockId{1, 0}));
  // A child before its parent is refused.
  EXPECT_EQ(tree->Add(missing[1], TreeBlock(g, missing[1])).status().code(),
            StatusCode::kDataLoss);
  for (const TreeBlockId& id : missing) {
    absl::StatusOr<bool> added = tree->Add(id, TreeBlock(g, id));
    ASSERT_TRUE(added.ok()) << added.status();
    EXPECT_TRUE(*added);
  }
  EXPECT_FALSE(*tree->Add(missing[0], TreeBlock(g, missing[0])));
  EXPECT_TRUE(tree->Missing({0, 300}).empty());
  EXPECT_EQ(tree->cached_bytes(),
            VerifiedTree::kTreeOverheadBytes +
                4 * (kBlock + VerifiedTree::kBlockOverheadBytes));
  absl::StatusOr<std::string> copy = tree->Block({0, 2});
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(AsBytes(*copy), TreeBlock(g, {0, 2}));
  // Different bytes for a verified block are refused, and change nothing.
  std::string forged(TreeBlock(g, {0, 1}).begin(), TreeBlock(g, {0, 1}).end());
  forged[5] ^= 1;
  EXPECT_EQ(tree->Add({0, 1}, AsBytes(forged)).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(tree->Block({0, 9}).status().code(), StatusCode::kNotFound);
}

TEST_F(VerifiedTreeTest, DataVerifiesOnlyAgainstVerifiedBlocks) {
  const std::shared_ptr<VerifiedTree> tree = Tree();
  const TreeGeometry& g = tree->geometry();
  EXPECT_EQ(tree->VerifyData(0, Data(0, 2)).code(), StatusCode::kDataLoss);
  for (const TreeBlockId& id : tree->Missing({0, 2})) {
    ASSERT_TRUE(tree->Add(id, TreeBlock(g, id)).ok());
  }
  EXPECT_TRUE(tree->VerifyData(0, Data(0, 2)).ok());
  EXPECT_TRUE(tree->VerifyDataBlock(1, Data(1, 2)).ok());
  std::string bad(Data(0, 1).begin(), Data(0, 1).end());
  bad[100] ^= 1;
  EXPECT_EQ(tree->VerifyDataBlock(0, AsBytes(bad)).code(),
            StatusCode::kDataLoss);
  // Block 200's tree block is not verified yet.
  EXPECT_EQ(tree->VerifyDataBlock(200, Data(200, 201)).code(),
            StatusCode::kDataLoss);
}

TEST_F(VerifiedTreeTest, ConcurrentStreamsShareOneTree) {
  const std::shared_ptr<VerifiedTree> tree = Tree();
  const TreeGeometry& g = tree->geometry();
  std::atomic<int> added{0}, failures{0};
  std::vector<std::thread> streams;
  for (int t = 0; t < 4; ++t) {
    streams.emplace_back([&, t] {
      for (uint64_t b = t; b < 300; b += 4) {
        for (const TreeBlockId& id : tree->Missing({b, b + 1})) {
          absl::StatusOr<bool> result = tree->Add(id, TreeBlock(g, id));
          if (!result.ok()) ++failures;
          if (result.ok() && *result) ++added;
        }
        if (!tree->VerifyDataBlock(b, Data(b, b + 1)).ok()) ++failures;
      }
    });
  }
  for (std::thread& stream : streams) stream.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(added.load(), 4);  // each block verified by exactly one stream
  EXPECT_EQ(tree->cached_bytes(),
            VerifiedTree::kTreeOverheadBytes +
                4 * (kBlock + VerifiedTree::kBlockOverheadBytes));
}

}  // namespace
}  // namespace verity
