#include "server/store/cache/caching_store.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/base/buffer_pool.h"
#include "lib/base/executor.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "server/store/cache/caching_blob.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/testing/remote_blob.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

constexpr uint64_t kSlab = 64 * 1024;

// Reads a range of `blob` asynchronously and waits for it; the read must not
// complete on the calling thread.
absl::StatusOr<std::string> ReadWaiting(const Blob& blob, BlobPart part,
                                        uint64_t offset, uint64_t size) {
  absl::Notification done;
  absl::StatusOr<std::string> result;
  const std::thread::id caller = std::this_thread::get_id();
  blob.ReadAsync(
      part, offset, Buffer::Allocate(size), [&](absl::StatusOr<Buffer> read) {
        EXPECT_NE(std::this_thread::get_id(), caller) << "completed inside";
        if (read.ok()) {
          result = StringOf(*read);
        } else {
          result = read.status();
        }
        done.Notify();
      });
  done.WaitForNotification();
  return result;
}

// True if the range is here: TryReadNow() reads it.
bool Here(const Blob& blob, BlobPart part, uint64_t offset, uint64_t size) {
  std::string out(size, '\0');
  const std::optional<absl::Status> read =
      blob.TryReadNow(part, offset, AsMutableBytes(&out));
  return read.has_value() && read->ok();
}

class CachingBlobTest : public FileStoreFixture {
 protected:
  // Puts `data_`, and opens it as a remote blob behind the slab cache.
  void SetUp() override {
    FileStoreFixture::SetUp();
    data_ = MakeData(10 * kSlab + 1234, 7);
    auto local = store_->OpenBlob(DigestFromText(MustPut(data_)));
    ASSERT_TRUE(local.ok()) << local.status();
    remote_ = std::make_shared<RemoteBlob>(*std::move(local));
    options_.slab_bytes = kSlab;
  }

  std::unique_ptr<CachingBlob> Open(std::unique_ptr<DiskCache> disk = nullptr) {
    cache_ = std::make_shared<SlabCache>(options_, std::move(disk));
    return std::make_unique<CachingBlob>(remote_, cache_);
  }

  std::string data_;
  std::shared_ptr<RemoteBlob> remote_;
  SlabCacheOptions options_;
  std::shared_ptr<SlabCache> cache_;
};

TEST_F(CachingBlobTest, ReadsAcrossSlabsAreExact) {
  auto blob = Open();
  EXPECT_FALSE(Here(*blob, BlobPart::kData, 0, 1));
  for (auto [offset, size] :
       std::vector<std::pair<uint64_t, uint64_t>>{{0, 1},
                                                  {kSlab - 10, 20},
                                                  {3 * kSlab + 5, 3 * kSlab},
                                                  {0, data_.size()},
                                                  {data_.size() - 7, 7}}) {
    auto got = ReadWaiting(*blob, BlobPart::kData, offset, size);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, data_.substr(offset, size)) << offset << "+" << size;
  }
}

TEST_F(CachingBlobTest, ASecondReadIsLocalAndFetchesNothing) {
  auto blob = Open();
  ASSERT_TRUE(ReadWaiting(*blob, BlobPart::kData, kSlab + 3, 100).ok());
  const int reads = remote_->reads(BlobPart::kData);
  EXPECT_EQ(reads, 1);
  std::string out(kSlab, '\0');
  ASSERT_EQ(blob->TryReadNow(BlobPart::kData, kSlab, AsMutableBytes(&out)),
            absl::OkStatus());
  EXPECT_EQ(out, data_.substr(kSlab, kSlab));
  EXPECT_EQ(remote_->reads(BlobPart::kData), reads);
  const SlabCacheStats stats = cache_->stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.memory_hits, 1u);
  EXPECT_EQ(stats.fetched_bytes, kSlab);
  // One byte more is not here, and asking fetches nothing.
  EXPECT_FALSE(Here(*blob, BlobPart::kData, kSlab, kSlab + 1));
  EXPECT_EQ(remote_->reads(BlobPart::kData), reads);
}

TEST_F(CachingBlobTest, ConcurrentReadsOfASlabShareOneFetch) {
  auto blob = Open();
  std::vector<absl::StatusOr<Buffer>> results(8);
  std::vector<absl::Notification> done(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    blob->ReadAsync(BlobPart::kData, 2 * kSlab + i * 1000,
                    Buffer::Allocate(100), [&, i](absl::StatusOr<Buffer> read) {
                      results[i] = std::move(read);
                      done[i].Notify();
                    });
  }
  for (size_t i = 0; i < results.size(); ++i) {
    done[i].WaitForNotification();
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    EXPECT_EQ(StringOf(*results[i]), data_.substr(2 * kSlab + i * 1000, 100));
  }
  EXPECT_EQ(remote_->reads(BlobPart::kData), 1);
}

TEST_F(CachingBlobTest, PrefetchMakesARangeLocal) {
  auto blob = Open();
  blob->Prefetch(BlobPart::kData, 0, 3 * kSlab);
  for (int i = 0; i < 5000 && !Here(*blob, BlobPart::kData, 0, 3 * kSlab);
       ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_TRUE(Here(*blob, BlobPart::kData, 0, 3 * kSlab));
  EXPECT_EQ(remote_->reads(BlobPart::kData), 3);
  EXPECT_EQ(cache_->stats().read_ahead, 3u);
  blob->Prefetch(BlobPart::kData, 0, 3 * kSlab);
  EXPECT_EQ(remote_->reads(BlobPart::kData), 3);
}

TEST_F(CachingBlobTest, OverTheFetchBudgetAReadFetchesOnlyItsBytes) {
  options_.max_fetch_bytes = 0;
  auto blob = Open();
  blob->Prefetch(BlobPart::kData, 0, kSlab);
  EXPECT_EQ(remote_->reads(BlobPart::kData), 0);
  auto got = ReadWaiting(*blob, BlobPart::kData, 10, 20);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, data_.substr(10, 20));
  EXPECT_EQ(cache_->stats().fetched_bytes, 20u);
  EXPECT_FALSE(Here(*blob, BlobPart::kData, 10, 20));
}

TEST_F(CachingBlobTest, ForgetDropsSlabsSoTheNextReadRefetches) {
  auto blob = Open();
  ASSERT_TRUE(ReadWaiting(*blob, BlobPart::kData, 0, 2 * kSlab).ok());
  EXPECT_TRUE(blob->Forget(BlobPart::kData, kSlab, 1));
  EXPECT_FALSE(blob->Forget(BlobPart::kData, kSlab, 1));
  EXPECT_TRUE(Here(*blob, BlobPart::kData, 0, kSlab));
  EXPECT_FALSE(Here(*blob, BlobPart::kData, kSlab, 1));
  ASSERT_TRUE(ReadWaiting(*blob, BlobPart::kData, 0, 2 * kSlab).ok());
  EXPECT_EQ(remote_->reads(BlobPart::kData), 3);
  EXPECT_EQ(cache_->stats().discarded, 1u);
}

// The stale slab of review D1: a slab whose fetch began before the slab was
// forgotten (an FEC repair rewrote its bytes) lands after it, and must not
// be cached, in memory or on disk, or every later read would get the old
// bytes back.
TEST_F(CachingBlobTest, AFetchBegunBeforeAForgetCachesNothing) {
  remote_->HoldAnswers(true);
  DiskCacheOptions disk_options;
  disk_options.dir = FreshTestDir();
  auto disk = DiskCache::Open(disk_options);
  ASSERT_TRUE(disk.ok()) << disk.status();
  auto cache = std::make_shared<SlabCache>(options_, *std::move(disk));
  CachingBlob blob(remote_, cache);
  absl::Notification read;
  blob.ReadAsync(BlobPart::kData, kSlab, Buffer::Allocate(10),
                 [&read](absl::StatusOr<Buffer> bytes) {
                   EXPECT_TRUE(bytes.ok()) << bytes.status();
                   read.Notify();
                 });
  remote_->AwaitHeld(1);
  blob.Forget(BlobPart::kData, kSlab, 1);
  remote_->Release();
  read.WaitForNotification();
  EXPECT_FALSE(Here(blob, BlobPart::kData, kSlab, 10));
  EXPECT_EQ(cache->stats().memory_bytes, 0u);
  // What is fetched after the Forget is cached as usual.
  std::thread release([this] {
    remote_->AwaitHeld(1);
    remote_->Release();
  });
  ASSERT_TRUE(ReadWaiting(blob, BlobPart::kData, kSlab, 10).ok());
  release.join();
  EXPECT_TRUE(Here(blob, BlobPart::kData, kSlab, 10));
}

TEST_F(CachingBlobTest, TreeReadsAreCachedToo) {
  auto blob = Open();
  auto tree =
      ReadWaiting(*blob, BlobPart::kTree, 0, blob->geometry().tree_size());
  ASSERT_TRUE(tree.ok()) << tree.status();
  auto expected = ReadAllTree(*store_->OpenBlob(blob->digest()).value());
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(*tree, *expected);
  EXPECT_TRUE(Here(*blob, BlobPart::kTree, 0, blob->geometry().tree_size()));
  EXPECT_FALSE(Here(*blob, BlobPart::kData, 0, 1));
}

// A blob with an FEC area larger than its tree and than a slab: the FEC
// part's slabs are sized by the FEC area, not the tree.
class CachingFecBlobTest : public CachingBlobTest {
 protected:
  void SetUp() override {
    fec_roots_ = 24;
    CachingBlobTest::SetUp();
  }
};

TEST_F(CachingFecBlobTest, FecReadsAreCachedBySlabsOfTheFecArea) {
  auto blob = Open();
  const uint64_t fec_size =
      PartSize(blob->geometry(), blob->fec_roots(), BlobPart::kFec);
  ASSERT_GT(fec_size, kSlab);
  ASSERT_GT(fec_size, blob->geometry().tree_size());
  auto fec = ReadWaiting(*blob, BlobPart::kFec, 0, fec_size);
  ASSERT_TRUE(fec.ok()) << fec.status();
  auto expected = ReadWaiting(*remote_, BlobPart::kFec, 0, fec_size);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(*fec, *expected);
  EXPECT_TRUE(Here(*blob, BlobPart::kFec, 0, fec_size));
}

TEST_F(CachingBlobTest, OutOfRangeReadsFailAsTheSourceSays) {
  auto blob = Open();
  EXPECT_FALSE(ReadWaiting(*blob, BlobPart::kData, data_.size() - 1, 2).ok());
  EXPECT_FALSE(blob->Forget(BlobPart::kData, data_.size(), 1));
}

TEST_F(CachingBlobTest, AFailedFetchCachesNothing) {
  auto cache = std::make_shared<SlabCache>(options_, nullptr);
  CachingBlob blob(remote_, cache);
  remote_->FailReads(true);
  EXPECT_EQ(ReadWaiting(blob, BlobPart::kData, 5, 10).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_FALSE(Here(blob, BlobPart::kData, 5, 10));
  remote_->FailReads(false);
  auto got = ReadWaiting(blob, BlobPart::kData, 5, 10);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, data_.substr(5, 10));
  EXPECT_EQ(remote_->reads(BlobPart::kData), 1);
}

TEST_F(CachingBlobTest, AVerifiedBlobVerifiesWhatTheCacheServes) {
  auto blob = Open();
  auto verified =
      VerifiedBlob::Create(std::shared_ptr<const Blob>(blob.release()));
  ASSERT_TRUE(verified.ok()) << verified.status();
  const uint64_t blocks = (*verified)->geometry().data_block_count();
  std::string read;
  ASSERT_EQ(ReadVerified(**verified, 0, blocks, &read), absl::OkStatus());
  EXPECT_EQ(read, data_);
  EXPECT_TRUE(Here((*verified)->blob(), BlobPart::kData, 0, data_.size()));
}

// A range of two slabs of which one is cached is not here, and asking
// fetches nothing; a read of a cached slab still completes later.
TEST_F(CachingBlobTest, HereMeansEverySlabAtOneLook) {
  auto blob = Open();
  ASSERT_TRUE(ReadWaiting(*blob, BlobPart::kData, 0, 10).ok());
  std::string out(kSlab + 10, '\0');
  EXPECT_FALSE(
      blob->TryReadNow(BlobPart::kData, kSlab - 5, AsMutableBytes(&out))
          .has_value());
  EXPECT_EQ(remote_->reads(BlobPart::kData), 1);
  auto cached = ReadWaiting(*blob, BlobPart::kData, 3, 7);  // checks "later"
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ(*cached, data_.substr(3, 7));
  EXPECT_EQ(remote_->reads(BlobPart::kData), 1);
}

// One slab of memory, many readers of many slabs: slabs are evicted while
// reads are in flight, and every read still gets its bytes, which the read
// owns until it completes.
TEST_F(CachingBlobTest, EvictionUnderConcurrentReadsKeepsEveryByte) {
  options_.memory_bytes = kSlab;
  auto blob = Open();
  std::vector<std::thread> readers;
  for (int r = 0; r < 8; ++r) {
    readers.emplace_back([&, r] {
      for (int i = 0; i < 40; ++i) {
        const uint64_t offset = (r * 7919 + i * 104729) % data_.size();
        const uint64_t size = std::min<uint64_t>(1 + (i * 31337) % (3 * kSlab),
                                                 data_.size() - offset);
        std::string out(size, '\0');
        std::optional<absl::Status> now =
            blob->TryReadNow(BlobPart::kData, offset, AsMutableBytes(&out));
        if (!now.has_value()) {
          auto got = ReadWaiting(*blob, BlobPart::kData, offset, size);
          ASSERT_TRUE(got.ok()) << got.status();
          out = *std::move(got);
        } else {
          ASSERT_TRUE(now->ok()) << *now;
        }
        ASSERT_EQ(out, data_.substr(offset, size)) << offset << "+" << size;
      }
    });
  }
  for (std::thread& reader : readers) reader.join();
}

class CachingStoreTest : public FileStoreFixture {};

TEST_F(CachingStoreTest, RefusesASlabSizeOutOfBounds) {
  for (uint64_t slab : {uint64_t{0}, kMinSlabBytes - 1, kMaxSlabBytes + 1}) {
    CachingStoreOptions options;
    options.slabs.slab_bytes = slab;
    auto store = CachingStore::Open(std::move(store_), options);
    EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(store.status().message().find("--cache_slab_bytes"),
              std::string::npos);
    Reopen();
  }
}

TEST_F(CachingStoreTest, OpensBlobsBehindTheCacheWithADiskTier) {
  const std::string data = MakeData(300000, 3);
  const std::string digest = MustPut(data, "name");
  CachingStoreOptions options;
  options.slabs.slab_bytes = kSlab;
  options.slabs.memory_bytes = kSlab;  // one slab: the rest stays on disk
  options.disk.dir = FreshTestDir("cache");
  auto store = CachingStore::Open(std::move(store_), options);
  ASSERT_TRUE(store.ok()) << store.status();
  auto blob = (*store)->OpenBlob(DigestFromText(digest));
  ASSERT_TRUE(blob.ok()) << blob.status();
  auto got = ReadWaiting(**blob, BlobPart::kData, 0, data.size());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, data);
  for (int i = 0; i < 5000 && (*store)->cache_stats().disk_bytes < data.size();
       ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_EQ((*store)->cache_stats().disk_bytes, data.size());
  got = ReadWaiting(**blob, BlobPart::kData, 0, data.size());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, data);
  EXPECT_GT((*store)->cache_stats().disk_hits, 0u);
  EXPECT_EQ((*store)->ResolveName("name").value(), DigestFromText(digest));
}

}  // namespace
}  // namespace verity::server
