// The cache of verified trees: LruCache keyed by digest keeps entries within
// its byte budget as they grow, evicts the least recently used first, and
// never takes an entry away from whoever holds it.

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/lru_cache.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/verified_tree.h"

namespace verity {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kPerBlock = kBlock + VerifiedTree::kBlockOverheadBytes;
constexpr uint64_t kPerTree = VerifiedTree::kTreeOverheadBytes;

using Cache = LruCache<VerifiedTree, DigestKeyOf<VerifiedTree>>;

Cache MakeCache(uint64_t max_bytes, size_t max_entries = SIZE_MAX) {
  LruCacheOptions options;
  options.max_bytes = max_bytes;
  options.max_entries = max_entries;
  return Cache(options);
}

class LruCacheTest : public ::testing::Test {
 protected:
  LruCacheTest() {
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      blobs_.push_back(MakeRandomTestBlob(
          1 << 20, TestParams(HashAlgorithm::kSha256, kBlock), seed));
    }
  }

  std::shared_ptr<VerifiedTree> TreeOf(int i) const {
    return *VerifiedTree::Create(blobs_[i].tree.descriptor, blobs_[i].digest);
  }

  std::shared_ptr<VerifiedTree> Insert(Cache& cache, int i) const {
    return cache.Insert(TreeOf(i));
  }

  // Verifies `blocks` more tree blocks of blob `i` into `tree` (at most the
  // 3 that 256 data blocks have) and settles the cache.
  void Grow(Cache& cache, int i, VerifiedTree& tree, int blocks) const {
    for (const TreeBlockId& id : tree.Missing({0, 256})) {
      if (blocks-- == 0) break;
      const TreeGeometry& g = tree.geometry();
      ASSERT_TRUE(tree.Add(id, AsBytes(blobs_[i].tree.tree)
                                   .subspan(g.Ordinal(id) * kBlock, kBlock))
                      .ok());
    }
    cache.Update(tree);
  }

  std::vector<TestBlob> blobs_;
};

TEST_F(LruCacheTest, FindsWhatWasInserted) {
  Cache cache = MakeCache(1 << 20);
  EXPECT_EQ(cache.Find(blobs_[0].digest), nullptr);
  std::shared_ptr<VerifiedTree> tree = Insert(cache, 0);
  EXPECT_EQ(cache.Find(blobs_[0].digest), tree);
  EXPECT_EQ(Insert(cache, 0), tree);  // the first one stays
  EXPECT_EQ(cache.Find(blobs_[1].digest), nullptr);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), kPerTree);
}

TEST_F(LruCacheTest, GrowthIsChargedAndEvictsTheLeastRecentlyUsed) {
  Cache cache = MakeCache(3 * kPerTree + 4 * kPerBlock);
  std::shared_ptr<VerifiedTree> a = Insert(cache, 0);
  std::shared_ptr<VerifiedTree> b = Insert(cache, 1);
  std::shared_ptr<VerifiedTree> c = Insert(cache, 2);
  Grow(cache, 0, *a, 2);
  Grow(cache, 1, *b, 1);
  EXPECT_EQ(cache.bytes(), 3 * kPerTree + 3 * kPerBlock);
  EXPECT_EQ(cache.Find(blobs_[2].digest), c);  // c is now the most recent
  Grow(cache, 1, *b, 2);                       // 5 blocks: over budget
  EXPECT_EQ(cache.Find(blobs_[0].digest), nullptr);
  EXPECT_EQ(cache.Find(blobs_[1].digest), b);
  EXPECT_EQ(cache.Find(blobs_[2].digest), c);
  EXPECT_EQ(cache.bytes(), 2 * kPerTree + 3 * kPerBlock);
  // The evicted tree still works for whoever holds it, and its growth is no
  // longer charged.
  EXPECT_EQ(a->geometry().block_size(), kBlock);
  Grow(cache, 0, *a, 1);
  EXPECT_EQ(cache.bytes(), 2 * kPerTree + 3 * kPerBlock);
}

TEST_F(LruCacheTest, ATreeLargerThanTheBudgetIsNotKept) {
  Cache cache = MakeCache(2 * kPerTree + kPerBlock);
  std::shared_ptr<VerifiedTree> a = Insert(cache, 0);
  std::shared_ptr<VerifiedTree> b = Insert(cache, 1);
  Grow(cache, 1, *b, 2);  // evicts a, and b is still too large
  EXPECT_EQ(cache.Find(blobs_[0].digest), nullptr);
  EXPECT_EQ(cache.Find(blobs_[1].digest), nullptr);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST_F(LruCacheTest, ZeroCapacityStillSharesWithinACall) {
  Cache cache = MakeCache(0);
  std::shared_ptr<VerifiedTree> tree = Insert(cache, 3);
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(cache.Find(blobs_[3].digest), nullptr);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST_F(LruCacheTest, ReinsertedAfterEvictionIsANewTree) {
  Cache cache = MakeCache(kPerTree);
  std::shared_ptr<VerifiedTree> old = Insert(cache, 0);
  Insert(cache, 1);
  std::shared_ptr<VerifiedTree> fresh = Insert(cache, 0);
  EXPECT_NE(old, fresh);
  Grow(cache, 0, *old, 1);  // charged to nothing
  EXPECT_EQ(cache.bytes(), kPerTree);
}

TEST_F(LruCacheTest, EntryLimitAndErase) {
  Cache cache = MakeCache(1 << 20, 2);
  Insert(cache, 0);
  Insert(cache, 1);
  EXPECT_NE(cache.Find(blobs_[0].digest), nullptr);  // 1 is now the oldest
  Insert(cache, 2);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Find(blobs_[1].digest), nullptr);
  cache.Erase(blobs_[0].digest);
  cache.Erase(blobs_[3].digest);  // not cached: nothing happens
  EXPECT_EQ(cache.Find(blobs_[0].digest), nullptr);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), kPerTree);
}

TEST_F(LruCacheTest, FindOrCreateCreatesOnlyOnAMiss) {
  Cache cache = MakeCache(1 << 20);
  int created = 0;
  auto create = [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
    ++created;
    return TreeOf(0);
  };
  absl::StatusOr<std::shared_ptr<VerifiedTree>> first =
      cache.FindOrCreate(blobs_[0].digest, create);
  absl::StatusOr<std::shared_ptr<VerifiedTree>> second =
      cache.FindOrCreate(blobs_[0].digest, create);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(created, 1);
  EXPECT_EQ(
      cache
          .FindOrCreate(blobs_[1].digest,
                        []() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
                          return absl::NotFoundError("no such blob");
                        })
          .status()
          .code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(cache.size(), 1u);
}

// Erase() called from inside create() stands for one that runs on another
// thread while create() opens the entry: what create() made is out of date
// (a blob opened just before it was quarantined or deleted), so it must not be
// cached for later lookups.
TEST_F(LruCacheTest, AnEntryErasedWhileBeingCreatedIsNotCached) {
  Cache cache = MakeCache(1 << 20);
  std::shared_ptr<VerifiedTree> made;
  absl::StatusOr<std::shared_ptr<VerifiedTree>> created = cache.FindOrCreate(
      blobs_[0].digest, [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
        made = TreeOf(0);
        cache.Erase(blobs_[0].digest);
        return made;
      });
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(*created, made);  // its caller still gets it
  EXPECT_EQ(cache.Find(blobs_[0].digest), nullptr);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  // The erasure is forgotten with the create() it overlapped: the next one
  // caches.
  absl::StatusOr<std::shared_ptr<VerifiedTree>> again = cache.FindOrCreate(
      blobs_[0].digest, [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
        return TreeOf(0);
      });
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NE(*again, made);
  EXPECT_EQ(cache.Find(blobs_[0].digest), *again);
}

TEST_F(LruCacheTest, AnEntryCachedDuringItsCreationIsGoneIfErasedToo) {
  // A second lookup of the same key caches its entry while the first one is
  // still creating; then the key is erased, then the first create() ends.
  Cache cache = MakeCache(1 << 20);
  std::shared_ptr<VerifiedTree> inner;
  absl::StatusOr<std::shared_ptr<VerifiedTree>> outer = cache.FindOrCreate(
      blobs_[0].digest, [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
        inner = *cache.FindOrCreate(
            blobs_[0].digest,
            [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
              return TreeOf(0);
            });
        EXPECT_EQ(cache.Find(blobs_[0].digest), inner);
        cache.Erase(blobs_[0].digest);
        return TreeOf(0);
      });
  ASSERT_TRUE(outer.ok()) << outer.status();
  ASSERT_NE(*outer, nullptr);
  EXPECT_EQ(cache.Find(blobs_[0].digest), nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

TEST_F(LruCacheTest, ALookupThatStartsAfterAnEraseCachesItsEntry) {
  // The outer create() erases the key, then a second lookup of it starts and
  // creates: that one's entry is current, and cached; the outer one is not.
  Cache cache = MakeCache(1 << 20);
  std::shared_ptr<VerifiedTree> inner;
  absl::StatusOr<std::shared_ptr<VerifiedTree>> outer = cache.FindOrCreate(
      blobs_[0].digest, [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
        cache.Erase(blobs_[0].digest);
        inner = *cache.FindOrCreate(
            blobs_[0].digest,
            [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
              return TreeOf(0);
            });
        return TreeOf(0);
      });
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_NE(*outer, inner);
  EXPECT_EQ(cache.Find(blobs_[0].digest), inner);
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(LruCacheTest, ErasingAnotherKeyDuringCreationStillCaches) {
  Cache cache = MakeCache(1 << 20);
  std::shared_ptr<VerifiedTree> other = Insert(cache, 1);
  absl::StatusOr<std::shared_ptr<VerifiedTree>> created = cache.FindOrCreate(
      blobs_[0].digest, [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
        cache.Erase(blobs_[1].digest);
        return TreeOf(0);
      });
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(cache.Find(blobs_[0].digest), *created);
  EXPECT_EQ(cache.Find(blobs_[1].digest), nullptr);
}

TEST_F(LruCacheTest, AFailedCreationThatWasErasedLeavesNothingBehind) {
  Cache cache = MakeCache(1 << 20);
  absl::StatusOr<std::shared_ptr<VerifiedTree>> failed = cache.FindOrCreate(
      blobs_[0].digest, [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
        cache.Erase(blobs_[0].digest);
        return absl::NotFoundError("deleted");
      });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::shared_ptr<VerifiedTree>> created = cache.FindOrCreate(
      blobs_[0].digest, [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
        return TreeOf(0);
      });
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(cache.Find(blobs_[0].digest), *created);
}

TEST_F(LruCacheTest, ConcurrentUseKeepsTheCountsConsistent) {
  Cache cache = MakeCache(3 * kPerTree + 5 * kPerBlock);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        const int i = (t + round) % 4;
        std::shared_ptr<VerifiedTree> tree = cache.Insert(TreeOf(i));
        if (round % 3 == 0) Grow(cache, i, *tree, 1);
        if (round % 7 == 0) cache.Erase(blobs_[(i + 1) % 4].digest);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(cache.bytes(), 3 * kPerTree + 5 * kPerBlock);
  uint64_t sum = 0;
  for (const TestBlob& blob : blobs_) {
    if (std::shared_ptr<VerifiedTree> tree = cache.Find(blob.digest)) {
      sum += tree->cached_bytes();
    }
  }
  EXPECT_EQ(cache.bytes(), sum);
}

TEST_F(LruCacheTest, ConcurrentCreationAndErasureKeepTheCountsConsistent) {
  Cache cache = MakeCache(3 * kPerTree + 5 * kPerBlock);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        const int i = (t + round) % 4;
        absl::StatusOr<std::shared_ptr<VerifiedTree>> tree = cache.FindOrCreate(
            blobs_[i].digest,
            [&]() -> absl::StatusOr<std::shared_ptr<VerifiedTree>> {
              return TreeOf(i);
            });
        ASSERT_TRUE(tree.ok()) << tree.status();
        if (round % 3 == 0) Grow(cache, i, **tree, 1);
        if (round % 2 == 0) cache.Erase(blobs_[(i + t) % 4].digest);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t sum = 0;
  for (const TestBlob& blob : blobs_) {
    if (std::shared_ptr<VerifiedTree> tree = cache.Find(blob.digest)) {
      sum += tree->cached_bytes();
    }
    cache.Erase(blob.digest);
    EXPECT_EQ(cache.Find(blob.digest), nullptr);
  }
  EXPECT_LE(sum, 3 * kPerTree + 5 * kPerBlock);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

// Entries of another kind, keyed by something other than a digest.
struct Piece {
  std::pair<int, int> key;
  std::string bytes;
  uint64_t cached_bytes() const { return bytes.size(); }
};
struct KeyOfPiece {
  using Key = std::pair<int, int>;
  const Key& operator()(const Piece& piece) const { return piece.key; }
};

TEST(LruCacheKeyTest, AnyHashableKey) {
  LruCacheOptions options;
  options.max_bytes = 10;
  LruCache<Piece, KeyOfPiece> cache(options);
  cache.Insert(std::make_shared<Piece>(Piece{{1, 0}, "abcd"}));
  cache.Insert(std::make_shared<Piece>(Piece{{1, 1}, "efgh"}));
  ASSERT_NE(cache.Find({1, 0}), nullptr);  // now the most recently used
  cache.Insert(std::make_shared<Piece>(Piece{{2, 0}, "ijkl"}));
  EXPECT_EQ(cache.Find({1, 1}), nullptr);
  EXPECT_EQ(cache.Find({1, 0})->bytes, "abcd");
  EXPECT_EQ(cache.bytes(), 8u);
}

}  // namespace
}  // namespace verity
