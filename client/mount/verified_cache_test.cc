#include "client/mount/verified_cache.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/testing/test_blob.h"

namespace verity::mount {
namespace {

constexpr uint64_t kSlab = VerifiedCache::kSlabBytes;

// A file of `size` bytes and the fetches asked of it, as [offset, end).
class FakeFile {
 public:
  explicit FakeFile(uint64_t size) : bytes_(MakeData(size, 11)) {}

  absl::StatusOr<Buffer> Fetch(uint64_t offset, uint64_t length) {
    {
      absl::MutexLock lock(&mu_);
      fetches_.push_back({offset, offset + length});
    }
    if (gate_ != nullptr) gate_->WaitForNotification();
    if (fail_) return absl::DataLossError("a block does not verify");
    Buffer fetched = Buffer::Allocate(length);
    std::memcpy(fetched.data(), bytes_.data() + offset, length);
    return fetched;
  }

  const std::string& bytes() const { return bytes_; }
  uint64_t size() const { return bytes_.size(); }
  std::vector<std::pair<uint64_t, uint64_t>> TakeFetches() {
    absl::MutexLock lock(&mu_);
    return std::exchange(fetches_, {});
  }
  size_t fetches() {
    absl::MutexLock lock(&mu_);
    return fetches_.size();
  }
  void set_fail(bool fail) { fail_ = fail; }
  // Fetches wait for `gate` (null: none) before they answer.
  void set_gate(absl::Notification* gate) { gate_ = gate; }

 private:
  std::string bytes_;
  absl::Mutex mu_;
  std::vector<std::pair<uint64_t, uint64_t>> fetches_ ABSL_GUARDED_BY(mu_);
  bool fail_ = false;
  absl::Notification* gate_ = nullptr;
};

const sdk::Digest& TestDigest() {
  static const sdk::Digest digest =
      *sdk::Digest::Parse("sha256:" + std::string(64, 'b'));
  return digest;
}

class VerifiedCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("verified_cache");
    auto cache = VerifiedCache::Open(dir_, uint64_t{64} << 20,
                                     BufferPool::Create(BufferPoolOptions()));
    ASSERT_TRUE(cache.ok()) << cache.status();
    cache_ = *std::move(cache);
  }

  absl::StatusOr<std::string> Read(uint64_t offset, uint64_t length) {
    ASSIGN_OR_RETURN(const Buffer bytes,
                     cache_->Read(TestDigest(), file_.size(), offset, length,
                                  [this](uint64_t begin, uint64_t count) {
                                    return file_.Fetch(begin, count);
                                  }));
    return std::string(bytes.view());
  }

  // Waits (bounded) until `bytes` of slabs are on the disk: the cache's
  // writer thread writes them after the read that fetched them.
  bool AwaitCachedBytes(uint64_t bytes) {
    for (int i = 0; i < 2000; ++i) {
      if (cache_->stats().bytes >= bytes) return true;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return false;
  }

  std::string dir_;
  std::unique_ptr<VerifiedCache> cache_;
  FakeFile file_{3 * kSlab + 5000};  // the last slab short
};

TEST_F(VerifiedCacheTest, AMissFetchesWholeSlabsAndTheNextReadIsLocal) {
  auto bytes = Read(kSlab - 100, 200);  // across slabs 0 and 1
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, file_.bytes().substr(kSlab - 100, 200));
  EXPECT_EQ(file_.TakeFetches(),
            (std::vector<std::pair<uint64_t, uint64_t>>{{0, 2 * kSlab}}));
  ASSERT_TRUE(AwaitCachedBytes(2 * kSlab));
  bytes = Read(10, kSlab + 20);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, file_.bytes().substr(10, kSlab + 20));
  EXPECT_TRUE(file_.TakeFetches().empty());
  EXPECT_EQ(cache_->stats().misses, 2u);
  EXPECT_EQ(cache_->stats().hits, 2u);
}

TEST_F(VerifiedCacheTest, OnlyTheMissingRunIsFetchedUpToTheShortLastSlab) {
  ASSERT_TRUE(Read(kSlab, 1).ok());
  ASSERT_TRUE(AwaitCachedBytes(kSlab));
  file_.TakeFetches();
  auto bytes = Read(0, file_.size());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, file_.bytes());
  EXPECT_EQ(file_.TakeFetches(), (std::vector<std::pair<uint64_t, uint64_t>>{
                                     {0, kSlab}, {2 * kSlab, file_.size()}}));
}

// A slab's file changed on the disk (one byte) is not handed out: it is
// fetched again, and the change is counted.
TEST_F(VerifiedCacheTest, ASlabChangedOnTheDiskIsFetchedAgain) {
  ASSERT_TRUE(Read(0, 10).ok());
  ASSERT_TRUE(AwaitCachedBytes(kSlab));
  file_.TakeFetches();
  absl::StatusOr<std::vector<std::string>> names = ListDir(dir_ + "/slabs");
  ASSERT_TRUE(names.ok() && names->size() == 1u);
  const std::string path = dir_ + "/slabs/" + names->front();
  std::string changed = file_.bytes().substr(0, kSlab);
  changed[5] ^= 0x40;
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_TRUE(WriteNewFileDurably(path, changed).ok());
  auto bytes = Read(0, 10);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, file_.bytes().substr(0, 10));
  EXPECT_EQ(file_.TakeFetches(),
            (std::vector<std::pair<uint64_t, uint64_t>>{{0, kSlab}}));
  EXPECT_EQ(cache_->stats().changed, 1u);
}

TEST_F(VerifiedCacheTest, AFailedFetchIsTheReadsErrorAndCachesNothing) {
  file_.set_fail(true);
  EXPECT_EQ(Read(0, 10).status().code(), absl::StatusCode::kDataLoss);
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(cache_->stats().bytes, 0u);
  file_.set_fail(false);
  ASSERT_TRUE(Read(0, 10).ok());
  EXPECT_EQ(file_.TakeFetches().size(), 2u);
}

TEST_F(VerifiedCacheTest, FillFetchesOnlyWhatIsMissingAndReadsNothing) {
  ASSERT_TRUE(Read(2 * kSlab, 1).ok());
  ASSERT_TRUE(AwaitCachedBytes(kSlab));
  file_.TakeFetches();
  const absl::Status filled =
      cache_->Fill(TestDigest(), file_.size(), 0, file_.size(),
                   [this](uint64_t begin, uint64_t count) {
                     return file_.Fetch(begin, count);
                   });
  ASSERT_TRUE(filled.ok()) << filled;
  EXPECT_EQ(file_.TakeFetches(),
            (std::vector<std::pair<uint64_t, uint64_t>>{
                {0, 2 * kSlab}, {3 * kSlab, file_.size()}}));
  EXPECT_EQ(cache_->stats().hits, 0u);
  EXPECT_EQ(cache_->stats().bytes, file_.size());  // on the disk already
  auto bytes = Read(0, file_.size());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, file_.bytes());
  EXPECT_TRUE(file_.TakeFetches().empty());
}

// Reads that miss a slab another read is fetching wait for that fetch: one
// fetch, every reader served from it (or given its error).
TEST_F(VerifiedCacheTest, OverlappingMissesShareOneFetch) {
  for (const bool fail : {false, true}) {
    SCOPED_TRACE(fail ? "a failed fetch" : "a fetch");
    const uint64_t joined = cache_->stats().joined;
    absl::Notification gate;
    file_.set_gate(&gate);
    file_.set_fail(fail);
    const uint64_t base = fail ? 2 * kSlab : 0;  // slabs not cached yet
    absl::StatusOr<std::string> first, second, third;
    std::thread a([&] { first = Read(base + 100, 10); });
    for (int i = 0; i < 5000 && file_.fetches() == 0; ++i) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    std::thread b([&] { second = Read(base + 5000, 300); });
    std::thread c([&] { third = Read(base + kSlab - 1, 1); });
    // Both wait for the first one's fetch (bounded: if they fetched instead,
    // they are held at the gate too, and the fetches are counted below).
    for (int i = 0; i < 5000 && cache_->stats().joined < joined + 2; ++i) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    gate.Notify();
    a.join();
    b.join();
    c.join();
    file_.set_gate(nullptr);
    EXPECT_EQ(cache_->stats().joined, joined + 2);
    EXPECT_EQ(
        file_.TakeFetches(),
        (std::vector<std::pair<uint64_t, uint64_t>>{{base, base + kSlab}}));
    if (fail) {
      EXPECT_EQ(first.status().code(), absl::StatusCode::kDataLoss);
      EXPECT_EQ(second.status().code(), absl::StatusCode::kDataLoss);
      EXPECT_EQ(third.status().code(), absl::StatusCode::kDataLoss);
    } else {
      EXPECT_EQ(*first, file_.bytes().substr(base + 100, 10));
      EXPECT_EQ(*second, file_.bytes().substr(base + 5000, 300));
      EXPECT_EQ(*third, file_.bytes().substr(base + kSlab - 1, 1));
    }
  }
  file_.set_fail(false);
}

}  // namespace
}  // namespace verity::mount
