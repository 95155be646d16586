// FileStore::PutBatch: many small blobs made durable by two syncfs for the
// whole batch, each blob with a result of its own. Its crash and fault
// matrices are in file_store_fault_test.

#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/file/file_store.h"
#include "server/store/file/testing/fault_file_system.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/file/testing/file_store_fault.h"

namespace verity::server {
namespace {

using ::testing::IsEmpty;

class FileStoreBatchTest : public FileStoreFixture {
 protected:
  void SetUp() override {
    file_system_ = &fs_;
    FileStoreFixture::SetUp();
  }

  static BatchPut Of(const std::string& data) {
    return BatchPut{MerkleParams{}, DigestFromText(DigestTextOf(data)), data};
  }

  // The syncfs calls among the file calls from `first` on.
  int SyncfsSince(int first) const {
    int syncs = 0;
    for (int call = first; call <= fs_.calls(); ++call) {
      syncs += absl::StartsWith(fs_.CallName(call), "syncfs");
    }
    return syncs;
  }

  FaultFileSystem fs_;
};

TEST_F(FileStoreBatchTest, ABatchIsMadeDurableByTwoSyncfs) {
  std::vector<std::string> datas;
  std::vector<BatchPut> blobs;
  for (uint64_t i = 0; i < 50; ++i) datas.push_back(MakeData(4000 + i, i));
  for (const std::string& data : datas) blobs.push_back(Of(data));
  const int before = fs_.calls() + 1;
  const std::vector<absl::StatusOr<PutResult>> results =
      store_->PutBatch(blobs);
  EXPECT_EQ(SyncfsSince(before), 2);
  ASSERT_EQ(results.size(), datas.size());
  for (size_t i = 0; i < datas.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    EXPECT_FALSE(results[i]->already_present);
    EXPECT_EQ(results[i]->info.digest, DigestTextOf(datas[i]));
    struct stat st;
    ASSERT_EQ(stat(BlobDirFor(root_, DigestTextOf(datas[i])).c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << "a record";
  }
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
  Reopen();
  for (const std::string& data : datas) {
    absl::StatusOr<std::shared_ptr<const Blob>> blob =
        store_->OpenBlob(DigestFromText(DigestTextOf(data)));
    ASSERT_TRUE(blob.ok()) << blob.status();
    EXPECT_EQ(*ReadAllData(**blob), data);
  }
}

TEST_F(FileStoreBatchTest, EachBlobEndsAsItsOwnPutWould) {
  const std::string stored = MakeData(3000, 1);
  MustPut(stored);
  const std::string fresh = MakeData(5000, 2);
  const std::string large = MakeData((1 << 20) + 1, 3);
  BatchPut wrong = Of(MakeData(6000, 4));
  wrong.data = fresh;  // not the content its digest says
  const std::vector<absl::StatusOr<PutResult>> results =
      store_->PutBatch({Of(stored), Of(fresh), wrong, Of(fresh), Of(large)});
  ASSERT_EQ(results.size(), 5u);
  ASSERT_TRUE(results[0].ok()) << results[0].status();
  EXPECT_TRUE(results[0]->already_present);
  ASSERT_TRUE(results[1].ok()) << results[1].status();
  EXPECT_FALSE(results[1]->already_present);
  EXPECT_TRUE(absl::IsDataLoss(results[2].status())) << results[2].status();
  EXPECT_FALSE(store_->Stat(wrong.digest).ok());
  // The same content twice: stored once, both told so.
  ASSERT_TRUE(results[3].ok()) << results[3].status();
  EXPECT_EQ(results[3]->info.digest, results[1]->info.digest);
  // Over the record limit: stored as a directory.
  ASSERT_TRUE(results[4].ok()) << results[4].status();
  struct stat st;
  ASSERT_EQ(stat(BlobDirFor(root_, DigestTextOf(large)).c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
}

}  // namespace
}  // namespace verity::server
