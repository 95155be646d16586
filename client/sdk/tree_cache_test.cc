// TreeCache keeps trees within its byte budget, evicts the least recently
// used first, and never takes a tree away from a stream that holds it.

#include "client/sdk/tree_cache.h"

#include <vector>

#include "client/testing/read_stream_fixture.h"
#include "gtest/gtest.h"

namespace verity::client {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kPerBlock = kBlock + TreeCache::kBlockOverheadBytes;
constexpr uint64_t kPerTree = TreeCache::kTreeOverheadBytes;

class TreeCacheTest : public ::testing::Test {
 protected:
  TreeCacheTest() {
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      blobs_.push_back(MakeRandomTestBlob(
          1 << 20, TestParams(HashAlgorithm::kSha256, kBlock), seed));
    }
  }

  MerkleVerifier VerifierOf(int i) const {
    return *MerkleVerifier::Create(blobs_[i].tree.descriptor, blobs_[i].digest);
  }

  std::shared_ptr<SharedTree> Insert(TreeCache& cache, int i) const {
    return cache.FindOrInsert(blobs_[i].digest, VerifierOf(i));
  }

  std::vector<TestBlob> blobs_;
};

TEST_F(TreeCacheTest, FindsWhatWasInserted) {
  TreeCache cache(1 << 20);
  EXPECT_EQ(cache.Find(blobs_[0].digest), nullptr);
  std::shared_ptr<SharedTree> tree = Insert(cache, 0);
  EXPECT_EQ(cache.Find(blobs_[0].digest), tree);
  EXPECT_EQ(Insert(cache, 0), tree);  // the first one stays
  EXPECT_EQ(cache.Find(blobs_[1].digest), nullptr);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), kPerTree);
}

TEST_F(TreeCacheTest, GrowthIsChargedAndEvictsTheLeastRecentlyUsed) {
  TreeCache cache(3 * kPerTree + 4 * kPerBlock);
  std::shared_ptr<SharedTree> a = Insert(cache, 0);
  std::shared_ptr<SharedTree> b = Insert(cache, 1);
  std::shared_ptr<SharedTree> c = Insert(cache, 2);
  cache.Grew(*a, 2);
  cache.Grew(*b, 1);
  EXPECT_EQ(cache.bytes(), 3 * kPerTree + 3 * kPerBlock);
  EXPECT_EQ(cache.Find(blobs_[2].digest), c);  // c is now the most recent
  cache.Grew(*b, 2);                           // 5 blocks: over budget
  EXPECT_EQ(cache.Find(blobs_[0].digest), nullptr);
  EXPECT_EQ(cache.Find(blobs_[1].digest), b);
  EXPECT_EQ(cache.Find(blobs_[2].digest), c);
  EXPECT_EQ(cache.bytes(), 2 * kPerTree + 3 * kPerBlock);
  // The evicted tree still works for whoever holds it, and its growth is no
  // longer charged.
  EXPECT_EQ(a->geometry().block_size(), kBlock);
  cache.Grew(*a, 100);
  EXPECT_EQ(cache.bytes(), 2 * kPerTree + 3 * kPerBlock);
}

TEST_F(TreeCacheTest, ATreeLargerThanTheBudgetIsNotKept) {
  TreeCache cache(2 * kPerTree + kPerBlock);
  std::shared_ptr<SharedTree> a = Insert(cache, 0);
  std::shared_ptr<SharedTree> b = Insert(cache, 1);
  cache.Grew(*b, 2);  // evicts a, and b is still too large
  EXPECT_EQ(cache.Find(blobs_[0].digest), nullptr);
  EXPECT_EQ(cache.Find(blobs_[1].digest), nullptr);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST_F(TreeCacheTest, ZeroCapacityStillSharesWithinACall) {
  TreeCache cache(0);
  std::shared_ptr<SharedTree> tree = Insert(cache, 3);
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(cache.Find(blobs_[3].digest), nullptr);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST_F(TreeCacheTest, ReinsertedAfterEvictionIsANewTree) {
  TreeCache cache(kPerTree);
  std::shared_ptr<SharedTree> old = Insert(cache, 0);
  Insert(cache, 1);
  std::shared_ptr<SharedTree> fresh = Insert(cache, 0);
  EXPECT_NE(old, fresh);
  cache.Grew(*old, 1);  // charged to nothing
  EXPECT_EQ(cache.bytes(), kPerTree);
}

}  // namespace
}  // namespace verity::client
