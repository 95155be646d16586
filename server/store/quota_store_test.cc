// The quota: a Put that would pass it is RESOURCE_EXHAUSTED "the store is
// full" and stores nothing, whether its size is declared or only seen as its
// content arrives; Puts under way count; a store that keeps count (the file
// store) frees quota as it deletes, one that does not (as S3) when counted
// again.

#include "server/store/quota_store.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/status_macros.h"
#include "lib/testing/test_blob.h"
#include "server/store/file/file_store.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/forwarding_store.h"
#include "server/store/testing/name_write_cases.h"

namespace verity::server {
namespace {

// A store that keeps no count, as a bucket: the quota counts it itself.
class UncountedStore : public ForwardingStore {
 public:
  explicit UncountedStore(std::unique_ptr<Store> inner)
      : ForwardingStore(*inner), owned_(std::move(inner)) {}
  std::optional<StoreTotals> Totals() const override { return std::nullopt; }

 private:
  std::unique_ptr<Store> owned_;
};

std::unique_ptr<Store> NewFileStore() {
  FileStoreOptions options;
  options.root = FreshTestDir();
  absl::StatusOr<std::unique_ptr<FileStore>> store = FileStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return *std::move(store);
}

// Puts `blob` without declaring its size: the quota sees it as it arrives.
absl::StatusOr<PutResult> PutUndeclared(Store& store, const TestBlob& blob) {
  return PutWith(store, blob, PutCommit{});
}

// Puts `blob` with its size declared: the quota takes it all at BeginPut.
absl::StatusOr<PutResult> PutDeclared(Store& store, const TestBlob& blob) {
  absl::StatusOr<std::unique_ptr<PutWriter>> writer =
      store.BeginPut(MerkleParams{}, blob.digest, blob.data.size());
  if (!writer.ok()) return writer.status();
  RETURN_IF_ERROR((*writer)->Append(absl::MakeConstSpan(
      reinterpret_cast<const uint8_t*>(blob.data.data()), blob.data.size())));
  return (*writer)->Commit(blob.digest, "");
}

class QuotaStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  // 10,000 bytes, over a file store counted by itself (false) or by the
  // quota (true).
  void SetUp() override {
    std::unique_ptr<Store> inner = NewFileStore();
    if (GetParam()) inner = std::make_unique<UncountedStore>(std::move(inner));
    store_ = std::make_unique<QuotaStore>(std::move(inner), 10000);
  }

  std::unique_ptr<QuotaStore> store_;
};

// A batch's blobs take the quota one by one: one that would pass it fails
// alone, and content stored already takes none.
TEST_P(QuotaStoreTest, ABatchBlobThatWouldPassItFailsAlone) {
  const TestBlob a = MakeRandomTestBlob(6000, MerkleParams{}, 11);
  const TestBlob b = MakeRandomTestBlob(5000, MerkleParams{}, 12);
  const TestBlob c = MakeRandomTestBlob(3000, MerkleParams{}, 13);
  ASSERT_TRUE(PutUndeclared(*store_, a).ok());
  const auto of = [](const TestBlob& blob) {
    return BatchPut{MerkleParams{}, blob.digest, blob.data};
  };
  const std::vector<absl::StatusOr<PutResult>> results =
      store_->PutBatch({of(a), of(b), of(c)});
  ASSERT_EQ(results.size(), 3u);
  ASSERT_TRUE(results[0].ok()) << results[0].status();
  EXPECT_TRUE(results[0]->already_present);
  EXPECT_TRUE(absl::IsResourceExhausted(results[1].status()))
      << results[1].status();
  EXPECT_FALSE(store_->Stat(b.digest).ok());
  ASSERT_TRUE(results[2].ok()) << results[2].status();
  EXPECT_EQ(store_->Used(), 9000u);
}

TEST_P(QuotaStoreTest, RefusesAPutThatWouldPassItAndStoresNothing) {
  const TestBlob a = MakeRandomTestBlob(6000, MerkleParams{}, 1);
  const TestBlob b = MakeRandomTestBlob(5000, MerkleParams{}, 2);
  const TestBlob c = MakeRandomTestBlob(4000, MerkleParams{}, 3);
  ASSERT_TRUE(PutUndeclared(*store_, a).ok());
  EXPECT_EQ(store_->Used(), 6000u);
  for (const bool declared : {false, true}) {
    SCOPED_TRACE(declared);
    const absl::StatusOr<PutResult> refused =
        declared ? PutDeclared(*store_, b) : PutUndeclared(*store_, b);
    EXPECT_TRUE(absl::IsResourceExhausted(refused.status()))
        << refused.status();
    EXPECT_NE(refused.status().message().find("the store is full"),
              std::string::npos)
        << refused.status();
    EXPECT_TRUE(absl::IsNotFound(store_->Stat(b.digest).status()));
    EXPECT_EQ(store_->Used(), 6000u);  // nothing held back
  }
  ASSERT_TRUE(PutDeclared(*store_, c).ok());
  EXPECT_EQ(store_->Used(), 10000u);
}

TEST_P(QuotaStoreTest, CountsPutsUnderWay) {
  const TestBlob a = MakeRandomTestBlob(6000, MerkleParams{}, 4);
  const TestBlob b = MakeRandomTestBlob(6000, MerkleParams{}, 5);
  absl::StatusOr<std::unique_ptr<PutWriter>> first =
      store_->BeginPut(MerkleParams{}, a.digest, a.data.size());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(absl::IsResourceExhausted(PutDeclared(*store_, b).status()));
  first->reset();  // abandoned: its share is back
  EXPECT_EQ(store_->Used(), 0u);
  EXPECT_TRUE(PutDeclared(*store_, b).ok());
}

TEST_P(QuotaStoreTest, ContentStoredAlreadyTakesNoMore) {
  const TestBlob a = MakeRandomTestBlob(6000, MerkleParams{}, 6);
  ASSERT_TRUE(PutUndeclared(*store_, a).ok());
  ASSERT_TRUE(PutUndeclared(*store_, a).ok());
  EXPECT_EQ(store_->Used(), 6000u);
}

TEST_P(QuotaStoreTest, DeletesGiveItBackOnceCounted) {
  const TestBlob a = MakeRandomTestBlob(6000, MerkleParams{}, 7);
  const TestBlob b = MakeRandomTestBlob(6000, MerkleParams{}, 8);
  ASSERT_TRUE(PutUndeclared(*store_, a).ok());
  ASSERT_TRUE(store_->DeleteBlob(a.digest).ok());
  // A store that keeps count gives the bytes back at once; otherwise the
  // figure errs high until the next count.
  EXPECT_EQ(store_->Used(), GetParam() ? 6000u : 0u);
  ASSERT_TRUE(store_->Recount().ok());
  EXPECT_EQ(store_->Used(), 0u);
  EXPECT_TRUE(PutUndeclared(*store_, b).ok());
}

TEST(QuotaStoreCountTest, KeepsWhatWasStoredSinceTheListingBegan) {
  QuotaStore store(std::make_unique<UncountedStore>(NewFileStore()), 100000);
  const TestBlob a = MakeRandomTestBlob(6000, MerkleParams{}, 9);
  ASSERT_TRUE(PutUndeclared(store, a).ok());
  // A count of a listing that began before the Put, and did not see it.
  store.Counted(0, absl::Now() - absl::Minutes(5));
  EXPECT_EQ(store.Used(), 6000u);
  // One that began after it, and saw it.
  store.Counted(6000, absl::Now() + absl::Minutes(2));
  EXPECT_EQ(store.Used(), 6000u);
}

TEST(QuotaStoreOffTest, ZeroIsNoQuota) {
  QuotaStore store(NewFileStore(), 0);
  const TestBlob a = MakeRandomTestBlob(60000, MerkleParams{}, 10);
  EXPECT_TRUE(PutDeclared(store, a).ok());
}

INSTANTIATE_TEST_SUITE_P(CountedAndUncounted, QuotaStoreTest,
                         ::testing::Bool());

}  // namespace
}  // namespace verity::server
