// The file store's name statements and fs-verity signatures: the cases every
// store passes (name_write_cases.h), then what only files have: they survive
// a restart, a name file written before statements still loads, and a
// damaged one is dropped like any damaged name file.

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/testing/test_blob.h"
#include "server/store/file/file_blob.h"
#include "server/store/file/file_store.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/name_index.h"
#include "server/store/testing/name_write_cases.h"

namespace verity::server {
namespace {

using FileStoreNamesTest = FileStoreFixture;

TEST_F(FileStoreNamesTest, StatementsGoWithNames) {
  ExpectStatementsGoWithNames(*store_);
}

TEST_F(FileStoreNamesTest, ARefusedNameWriteChangesNothing) {
  ExpectARefusedNameWriteChangesNothing(*store_);
}

TEST_F(FileStoreNamesTest, NamesKeepTheirHistory) {
  ExpectNamesKeepTheirHistory(*store_, 5);
}

TEST_F(FileStoreNamesTest, HistoriesSurviveARestart) {
  const TestBlob a = MakeRandomTestBlob(700, MerkleParams{}, 3);
  const TestBlob b = MakeRandomTestBlob(800, MerkleParams{}, 4);
  ASSERT_TRUE(PutWith(*store_, a, PutCommit{}).ok());
  ASSERT_TRUE(PutWith(*store_, b, PutCommit{}).ok());
  ASSERT_TRUE(store_->SetName(a.digest, NameWrite{"rel", "s1", {}}).ok());
  ASSERT_TRUE(store_->SetName(b.digest, NameWrite{"rel", "s2", {}}).ok());
  const NameHistory before = *store_->History("rel");
  Reopen();
  const absl::StatusOr<NameHistory> after = store_->History("rel");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->versions, before.versions);
  EXPECT_EQ(store_->LookupName("rel")->statement, "s2");
}

TEST_F(FileStoreNamesTest, ListNamesFindsEveryName) {
  ExpectListNamesFindsEveryName(*store_);
}

TEST_F(FileStoreNamesTest, SignaturesGoWithBlobs) {
  ExpectSignaturesGoWithBlobs(*store_);
}

TEST_F(FileStoreNamesTest, TreeManifestMarksGoWithBlobs) {
  ExpectTreeManifestMarksGoWithBlobs(*store_);
}

TEST_F(FileStoreNamesTest, TreeManifestMarksSurviveARestart) {
  const TestBlob blob = MakeRandomTestBlob(600, MerkleParams{}, 2);
  PutCommit commit;
  commit.tree_manifest = true;
  ASSERT_TRUE(PutWith(*store_, blob, commit).ok());
  Reopen();
  EXPECT_TRUE(store_->Stat(blob.digest)->tree_manifest);
  // A mark that is not an empty regular file is damage.
  const std::string mark = JoinPath(BlobDirFor(root_, blob.digest_text),
                                    std::string(kTreeManifestFileName));
  ASSERT_TRUE(WriteWholeFile(mark, "x").ok());
  Reopen();
  EXPECT_TRUE(absl::IsDataLoss(store_->Stat(blob.digest).status()));
}

TEST_F(FileStoreNamesTest, NameWritesAreCompareAndSet) {
  ExpectNameWritesAreCompareAndSet({store_.get()});
}

TEST_F(FileStoreNamesTest, StatementsAndSignaturesSurviveARestart) {
  const TestBlob blob = MakeRandomTestBlob(5000, MerkleParams{}, 1);
  const std::string statement("statement\0bytes", 15);
  ASSERT_TRUE(PutWith(*store_, blob,
                      PutCommit{{}, NameWrite{"n", statement, {}}, "sig"})
                  .ok());
  ASSERT_TRUE(store_->SetName(blob.digest, NameWrite{"m", "", {}}).ok());
  Reopen();
  EXPECT_EQ(store_->LookupName("n")->statement, statement);
  EXPECT_EQ(store_->LookupName("m")->statement, "");
  EXPECT_EQ(store_->Stat(blob.digest)->fsverity_signature, "sig");
  EXPECT_EQ(ReadWholeFile(JoinPath(BlobDirFor(root_, blob.digest_text),
                                   std::string(kSignatureFileName)))
                .value(),
            "sig");
}

TEST_F(FileStoreNamesTest, ANameFileWithoutAStatementStillLoads) {
  const std::string digest = MustPut("old content");
  // What verityd wrote before names had statements.
  ASSERT_TRUE(WriteWholeFile(root_ + "/names/" + NameFileName("old/name"),
                             digest + "\nold/name")
                  .ok());
  Reopen();
  EXPECT_EQ(store_->LookupName("old/name")->digest.ToString(), digest);
  EXPECT_EQ(store_->LookupName("old/name")->statement, "");
}

TEST_F(FileStoreNamesTest, ADamagedStatementDropsItsNameFile) {
  const std::string digest = MustPut("content");
  const std::string file = root_ + "/names/" + NameFileName("n");
  ASSERT_TRUE(
      WriteWholeFile(file, absl::StrCat(digest, "\nn", std::string(1, '\0')))
          .ok());
  Reopen();
  EXPECT_TRUE(absl::IsNotFound(store_->LookupName("n").status()));
  EXPECT_TRUE(log_.Contains("name file has a statement of 0 bytes"));
  EXPECT_TRUE(EntriesOf(root_ + "/names").empty());
}

TEST_F(FileStoreNamesTest, ADamagedSignatureQuarantinesItsBlob) {
  const std::string digest = MustPut("content");
  const std::string file =
      JoinPath(BlobDirFor(root_, digest), std::string(kSignatureFileName));
  ASSERT_TRUE(WriteWholeFile(file, "").ok());  // empty: never written so
  Reopen();
  EXPECT_TRUE(
      absl::IsDataLoss(store_->OpenBlob(DigestFromText(digest)).status()));
  EXPECT_TRUE(log_.Contains("fsverity_signature is not a regular file"));
}

}  // namespace
}  // namespace verity::server
