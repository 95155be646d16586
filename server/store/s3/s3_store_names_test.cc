// The S3 store's name statements and fs-verity signatures, over FakeS3: the
// cases every store passes (name_write_cases.h), with name writes raced
// between two replicas on one bucket, and what the bucket holds.

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
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

TEST_F(S3StoreNamesTest, NameWritesAreCompareAndSetAcrossReplicas) {
  std::unique_ptr<S3Store> replica = OpenReplica();
  ExpectNameWritesAreCompareAndSet({store_.get(), replica.get()});
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
