// The S3 store's name statements and fs-verity signatures, over FakeS3: the
// cases every store passes (name_write_cases.h), with name writes raced
// between two replicas on one bucket, and what the bucket holds.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "server/store/name_index.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/s3/s3_store.h"
#include "server/store/s3/testing/fake_s3.h"
#include "server/store/s3/testing/fake_s3_store.h"
#include "server/store/testing/name_write_cases.h"

namespace verity::server {
namespace {

class S3StoreNamesTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = OpenReplica(); }

  // Another server on the same bucket.
  std::unique_ptr<S3Store> OpenReplica() {
    absl::StatusOr<std::unique_ptr<S3Store>> store =
        S3Store::Open(FakeS3StoreOptions(s3_));
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  std::shared_ptr<FakeS3> s3_ = std::make_shared<FakeS3>();
  std::unique_ptr<S3Store> store_;
};

TEST_F(S3StoreNamesTest, StatementsGoWithNames) {
  ExpectStatementsGoWithNames(*store_);
}

TEST_F(S3StoreNamesTest, ARefusedNameWriteChangesNothing) {
  ExpectARefusedNameWriteChangesNothing(*store_);
}

TEST_F(S3StoreNamesTest, NamesKeepTheirHistory) {
  ExpectNamesKeepTheirHistory(*store_, 5);
}

TEST_F(S3StoreNamesTest, ListNamesFindsEveryName) {
  ExpectListNamesFindsEveryName(*store_);
}

TEST_F(S3StoreNamesTest, SignaturesGoWithBlobs) {
  ExpectSignaturesGoWithBlobs(*store_);
}

TEST_F(S3StoreNamesTest, TreeManifestMarksGoWithBlobs) {
  ExpectTreeManifestMarksGoWithBlobs(*store_);
  // Another replica sees the mark.
  const TestBlob blob = MakeRandomTestBlob(600, MerkleParams{}, 2);
  PutCommit commit;
  commit.tree_manifest = true;
  ASSERT_TRUE(PutWith(*store_, blob, commit).ok());
  EXPECT_TRUE(OpenReplica()->Stat(blob.digest)->tree_manifest);
}

// FindMissing asks Has of many blobs, a tree Put's check DataSize: one
// request per blob (the quarantine from one listing), not a Stat's several.
TEST_F(S3StoreNamesTest, HasAndDataSizeAskOneRequestPerBlob) {
  auto counting = std::make_shared<CountingTransport>(s3_);
  auto* ops = &counting->ops;
  auto* mu = &counting->mu;
  std::unique_ptr<S3Store> store = *S3Store::Open(FakeS3StoreOptions(counting));
  std::vector<TestBlob> blobs;
  for (int i = 0; i < 5; ++i) {
    blobs.push_back(MakeRandomTestBlob(3000, MerkleParams{}, 70 + i));
    ASSERT_TRUE(PutWith(*store, blobs.back(), PutCommit{}).ok());
  }
  const TestBlob absent = MakeRandomTestBlob(3000, MerkleParams{}, 99);
  {
    absl::MutexLock lock(mu);
    ops->clear();
  }
  for (const TestBlob& blob : blobs) {
    EXPECT_TRUE(*store->Has(blob.digest));
    EXPECT_EQ(*store->DataSize(blob.digest), 3000u);
  }
  EXPECT_FALSE(*store->Has(absent.digest));
  EXPECT_TRUE(absl::IsNotFound(store->DataSize(absent.digest).status()));
  {
    absl::MutexLock lock(mu);
    EXPECT_EQ((*ops)["HeadDescriptor"], 6);
    EXPECT_EQ((*ops)["GetDescriptor"], 6);
    EXPECT_EQ((*ops)["HeadQuarantine"], 0);
    EXPECT_LE((*ops)["ListObjectsV2"], 1);
  }
  // Its own quarantine it knows at once.
  ASSERT_TRUE(store->Quarantine(blobs[0].digest, "test").ok());
  EXPECT_FALSE(*store->Has(blobs[0].digest));
  EXPECT_TRUE(absl::IsDataLoss(store->DataSize(blobs[0].digest).status()));
}

TEST_F(S3StoreNamesTest, NameWritesAreCompareAndSetAcrossReplicas) {
  std::unique_ptr<S3Store> replica = OpenReplica();
  ExpectNameWritesAreCompareAndSet({store_.get(), replica.get()});
}

// Shared records are compare-and-set across replicas, and a write whose
// answer is lost (radosgw answers racing conditional PUTs with a 500 at
// times) is judged by what the record holds after.
TEST_F(S3StoreNamesTest, SharedRecordsAreCompareAndSet) {
  std::unique_ptr<S3Store> other = OpenReplica();
  absl::StatusOr<SharedRecord> first = store_->WriteRecord("lease", "a", {});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(absl::IsFailedPrecondition(
      other->WriteRecord("lease", "b", std::nullopt).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(
      other->WriteRecord("lease", "b", std::string("stale")).status()));
  absl::StatusOr<std::optional<SharedRecord>> read = other->ReadRecord("lease");
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ((*read)->body, "a");
  EXPECT_EQ((*read)->version, first->version);

  s3_->Inject(S3Fault{"PutRecord", 1, S3FaultKind::kHttp500, /*applied=*/true});
  absl::StatusOr<SharedRecord> landed =
      other->WriteRecord("lease", "b", (*read)->version);
  ASSERT_TRUE(landed.ok()) << landed.status();
  EXPECT_EQ(landed->body, "b");
  s3_->Inject(
      S3Fault{"PutRecord", 1, S3FaultKind::kHttp500, /*applied=*/false});
  EXPECT_TRUE(absl::IsFailedPrecondition(
      store_->WriteRecord("lease", "c", landed->version).status()));
  EXPECT_EQ((*store_->ReadRecord("lease"))->body, "b");
  EXPECT_TRUE(
      absl::IsInvalidArgument(store_->WriteRecord("../x", "", {}).status()));
}

TEST_F(S3StoreNamesTest, TheBucketHoldsThemWhereStorageMdSays) {
  const TestBlob blob = MakeRandomTestBlob(4000, MerkleParams{}, 1);
  ASSERT_TRUE(
      PutWith(*store_, blob, PutCommit{{}, NameWrite{"n", "stmt", {}}, "sig"})
          .ok());
  const S3Layout layout("p/");
  EXPECT_EQ(s3_->Keys(layout.BlobKey(blob.digest, BlobObject::kSignature)),
            std::vector<std::string>{
                layout.BlobKey(blob.digest, BlobObject::kSignature)});
  EXPECT_EQ(s3_->Keys(layout.NameKey("n")),
            std::vector<std::string>{layout.NameKey("n")});
  // A replica that opens the blob reads its signature.
  std::unique_ptr<S3Store> replica = OpenReplica();
  EXPECT_EQ((*replica->OpenBlob(blob.digest))->fsverity_signature(), "sig");
  EXPECT_EQ(replica->LookupName("n")->statement, "stmt");
}

TEST_F(S3StoreNamesTest, AnOversizedSignatureObjectIsDataLoss) {
  const TestBlob blob = MakeRandomTestBlob(4000, MerkleParams{}, 2);
  ASSERT_TRUE(PutWith(*store_, blob, PutCommit{}).ok());
  S3Request put;
  put.op = "PutObject";
  put.method = "PUT";
  put.key = S3Layout("p/").BlobKey(blob.digest, BlobObject::kSignature);
  put.body = std::string(kMaxFsveritySignatureSize + 1, 's');
  std::unique_ptr<S3Client> client =
      S3Client::WithTransport(S3ClientOptions(), s3_);
  ASSERT_TRUE(client->Call(std::move(put)).status.ok());
  EXPECT_TRUE(absl::IsDataLoss(store_->OpenBlob(blob.digest).status()));
  EXPECT_TRUE(absl::IsDataLoss(store_->Stat(blob.digest).status()));
}

}  // namespace
}  // namespace verity::server
