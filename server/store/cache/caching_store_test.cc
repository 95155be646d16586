#include "server/store/cache/caching_store.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "lib/hash.h"
#include "lib/test_blob.h"
#include "server/store/cache/caching_blob.h"
#include "server/store/file/file_store_testing.h"
#include "server/store/testing/remote_blob.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

constexpr uint64_t kSlab = 64 * 1024;

// Reads a range of `blob` and waits for it.
absl::StatusOr<std::string> ReadWaiting(const Blob& blob, BlobPart part,
                                        uint64_t offset, uint64_t size) {
  std::string out(size, '\0');
  absl::Notification done;
  absl::Status result;
  blob.Read(part, offset, AsMutableBytes(&out), [&](absl::Status status) {
    result = std::move(status);
    done.Notify();
  });
  done.WaitForNotification();
  if (!result.ok()) return result;
  return out;
}

// Fails every read while `fail` is set, as an unreachable store does.
class FailingBlob final : public Blob {
 public:
  explicit FailingBlob(std::shared_ptr<const Blob> source)
      : Blob(*source), source_(std::move(source)) {}
  bool IsLocal(BlobPart, uint64_t, uint64_t) const override { return false; }
  void Read(BlobPart part, uint64_t offset, absl::Span<uint8_t> out,
            ReadDone done) const override {
    if (fail) {
      std::move(done)(absl::UnavailableError("the store is down"));
      return;
    }
    source_->Read(part, offset, out, std::move(done));
  }
  void Prefetch(BlobPart, uint64_t, uint64_t) const override {}

  std::atomic<bool> fail{false};

 private:
  const std::shared_ptr<const Blob> source_;
};

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
    cache_ = std::make_unique<SlabCache>(options_, std::move(disk));
    return std::make_unique<CachingBlob>(remote_, cache_.get());
  }

  std::string data_;
  std::shared_ptr<RemoteBlob> remote_;
  SlabCacheOptions options_;
  std::unique_ptr<SlabCache> cache_;
};

TEST_F(CachingBlobTest, ReadsAcrossSlabsAreExact) {
  auto blob = Open();
  EXPECT_FALSE(blob->IsLocal(BlobPart::kData, 0, 1));
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
  EXPECT_TRUE(blob->IsLocal(BlobPart::kData, kSlab, kSlab));
  EXPECT_FALSE(blob->IsLocal(BlobPart::kData, kSlab, kSlab + 1));
  std::string out(kSlab, '\0');
  ASSERT_TRUE(
      ReadLocal(*blob, BlobPart::kData, kSlab, AsMutableBytes(&out)).ok());
  EXPECT_EQ(out, data_.substr(kSlab, kSlab));
  EXPECT_EQ(remote_->reads(BlobPart::kData), reads);
  const SlabCacheStats stats = cache_->stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.memory_hits, 1u);
  EXPECT_EQ(stats.fetched_bytes, kSlab);
}

TEST_F(CachingBlobTest, ConcurrentReadsOfASlabShareOneFetch) {
  auto blob = Open();
  std::vector<std::string> outs(8, std::string(100, '\0'));
  std::vector<absl::Status> results(outs.size());
  std::vector<absl::Notification> done(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    blob->Read(BlobPart::kData, 2 * kSlab + i * 1000, AsMutableBytes(&outs[i]),
               [&, i](absl::Status status) {
                 results[i] = std::move(status);
                 done[i].Notify();
               });
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    done[i].WaitForNotification();
    ASSERT_TRUE(results[i].ok()) << results[i];
    EXPECT_EQ(outs[i], data_.substr(2 * kSlab + i * 1000, 100));
  }
  EXPECT_EQ(remote_->reads(BlobPart::kData), 1);
}

TEST_F(CachingBlobTest, PrefetchMakesARangeLocal) {
  auto blob = Open();
  blob->Prefetch(BlobPart::kData, 0, 3 * kSlab);
  for (int i = 0; i < 5000 && !blob->IsLocal(BlobPart::kData, 0, 3 * kSlab);
       ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_TRUE(blob->IsLocal(BlobPart::kData, 0, 3 * kSlab));
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
  EXPECT_FALSE(blob->IsLocal(BlobPart::kData, 10, 20));
}

TEST_F(CachingBlobTest, ForgetDropsSlabsSoTheNextReadRefetches) {
  auto blob = Open();
  ASSERT_TRUE(ReadWaiting(*blob, BlobPart::kData, 0, 2 * kSlab).ok());
  EXPECT_TRUE(blob->Forget(BlobPart::kData, kSlab, 1));
  EXPECT_FALSE(blob->Forget(BlobPart::kData, kSlab, 1));
  EXPECT_TRUE(blob->IsLocal(BlobPart::kData, 0, kSlab));
  EXPECT_FALSE(blob->IsLocal(BlobPart::kData, kSlab, 1));
  ASSERT_TRUE(ReadWaiting(*blob, BlobPart::kData, 0, 2 * kSlab).ok());
  EXPECT_EQ(remote_->reads(BlobPart::kData), 3);
  EXPECT_EQ(cache_->stats().discarded, 1u);
}

TEST_F(CachingBlobTest, TreeReadsAreCachedToo) {
  auto blob = Open();
  auto tree =
      ReadWaiting(*blob, BlobPart::kTree, 0, blob->geometry().tree_size());
  ASSERT_TRUE(tree.ok()) << tree.status();
  auto expected = ReadAllTree(*store_->OpenBlob(blob->digest()).value());
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(*tree, *expected);
  EXPECT_TRUE(blob->IsLocal(BlobPart::kTree, 0, blob->geometry().tree_size()));
  EXPECT_FALSE(blob->IsLocal(BlobPart::kData, 0, 1));
}

TEST_F(CachingBlobTest, OutOfRangeReadsFailAsTheSourceSays) {
  auto blob = Open();
  EXPECT_FALSE(ReadWaiting(*blob, BlobPart::kData, data_.size() - 1, 2).ok());
  EXPECT_FALSE(blob->Forget(BlobPart::kData, data_.size(), 1));
}

TEST_F(CachingBlobTest, AFailedFetchCachesNothing) {
  auto failing = std::make_shared<FailingBlob>(remote_);
  SlabCache cache(options_, nullptr);
  CachingBlob blob(failing, &cache);
  failing->fail = true;
  EXPECT_EQ(ReadWaiting(blob, BlobPart::kData, 5, 10).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_FALSE(blob.IsLocal(BlobPart::kData, 5, 10));
  failing->fail = false;
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
  BlockRead read;
  absl::Notification fetched;
  absl::Status status;
  const uint64_t blocks = (*verified)->geometry().data_block_count();
  (*verified)->Fetch(0, blocks, &read, [&](absl::Status s) {
    status = std::move(s);
    fetched.Notify();
  });
  fetched.WaitForNotification();
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE((*verified)->VerifyRest(&read).ok());
  EXPECT_EQ(read.data, data_);
  EXPECT_TRUE((*verified)->IsLocal(0, blocks));
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
