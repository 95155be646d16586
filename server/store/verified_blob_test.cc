// VerifiedBlob against a real store: corruption on disk is caught on every
// read, unless verify_once remembers that the block was already verified.

#include "server/store/verified_blob.h"

#include <string>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/store/file/file_store_testing.h"
#include "server/store/remote_blob_testing.h"

namespace verity::server {
namespace {

class VerifiedBlobTest : public FileStoreFixture {
 protected:
  void SetUp() override {
    FileStoreFixture::SetUp();
    data_ = MakeData(200 * 4096 + 5, 1);
    digest_ = MustPut(data_);
  }

  std::shared_ptr<VerifiedBlob> Open(bool verify_once) {
    auto blob = store_->OpenBlob(DigestFromText(digest_));
    EXPECT_TRUE(blob.ok()) << blob.status();
    auto verified = VerifiedBlob::Create(*blob, verify_once);
    EXPECT_TRUE(verified.ok()) << verified.status();
    return *verified;
  }

  void CorruptBlock(uint64_t block) {
    const std::string path = BlobDirFor(root_, digest_) + "/data";
    std::string bytes = *ReadWholeFile(path);
    bytes[block * 4096 + 10] ^= 0x01;
    ASSERT_TRUE(WriteWholeFile(path, bytes).ok());
  }

  std::string data_;
  std::string digest_;
};

TEST_F(VerifiedBlobTest, ReadsVerifiedDataAndCatchesCorruption) {
  std::shared_ptr<VerifiedBlob> blob = Open(/*verify_once=*/false);
  std::string out;
  ASSERT_TRUE(ReadVerified(*blob, 0, 201, &out).ok());
  EXPECT_TRUE(out == data_);
  EXPECT_TRUE(blob->TreeIsVerifiedFor(0, 201));
  CorruptBlock(150);
  absl::Status status = ReadVerified(*blob, 128, 201, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("offset 614400"), absl::string_view::npos)
      << status;
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(IsTreeCorruption(status));
  EXPECT_TRUE(ReadVerified(*blob, 0, 128, &out).ok());
}

TEST_F(VerifiedBlobTest, TreeCorruptionIsMarkedAsSuch) {
  const std::string path = BlobDirFor(root_, digest_) + "/tree";
  std::string bytes = *ReadWholeFile(path);
  // The tree is top level first: the root block, then level 0; this is the
  // second level-0 block, for data blocks 128 on.
  bytes[2 * 4096 + 7] ^= 0x01;
  ASSERT_TRUE(WriteWholeFile(path, bytes).ok());
  std::shared_ptr<VerifiedBlob> blob = Open(/*verify_once=*/false);
  std::string out;
  EXPECT_TRUE(ReadVerified(*blob, 0, 1, &out).ok());
  absl::Status status = ReadVerified(*blob, 130, 131, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_TRUE(IsTreeCorruption(status));
}

TEST_F(VerifiedBlobTest, VerifyOnceSkipsBlocksAlreadyVerified) {
  std::shared_ptr<VerifiedBlob> blob = Open(/*verify_once=*/true);
  std::string out;
  ASSERT_TRUE(ReadVerified(*blob, 0, 100, &out).ok());
  CorruptBlock(50);   // verified before: trusted now, not rehashed
  CorruptBlock(150);  // never verified: still caught
  EXPECT_TRUE(ReadVerified(*blob, 0, 100, &out).ok());
  EXPECT_EQ(out[50 * 4096 + 10],
            static_cast<char>(data_[50 * 4096 + 10] ^ 0x01));
  EXPECT_EQ(ReadVerified(*blob, 90, 160, &out).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_TRUE(ReadVerified(*blob, 160, 201, &out).ok());
}

TEST_F(VerifiedBlobTest, StepsResumeWhereTheCachedTreeEnds) {
  std::shared_ptr<VerifiedBlob> blob = Open(/*verify_once=*/false);
  // Nothing cached: the cheap step verifies nothing and reads no tree block.
  BlockRead cold;
  ASSERT_TRUE(blob->Load(0, 4, &cold).ok());
  ASSERT_TRUE(blob->VerifyCached(&cold).ok());
  EXPECT_EQ(cold.next, 0);
  EXPECT_EQ(blob->cached_tree_bytes(), 0);

  // Level-0 tree block 0 covers data blocks [0, 128) with SHA-256 and 4 KiB.
  std::string out;
  ASSERT_TRUE(ReadVerified(*blob, 0, 10, &out).ok());
  ASSERT_EQ(blob->data_blocks_hashed(), 10);
  BlockRead read;
  ASSERT_TRUE(blob->Load(100, 201, &read).ok());
  ASSERT_TRUE(blob->VerifyCached(&read).ok());
  EXPECT_EQ(read.next, 128);
  EXPECT_FALSE(read.verified());
  EXPECT_EQ(blob->data_blocks_hashed(), 10 + 28);
  // The rest reads the missing tree block and hashes only blocks 128..200.
  ASSERT_TRUE(blob->VerifyRest(&read).ok());
  EXPECT_TRUE(read.verified());
  EXPECT_EQ(blob->data_blocks_hashed(), 10 + 28 + 73);
  EXPECT_TRUE(read.data == data_.substr(100 * 4096));
}

TEST_F(VerifiedBlobTest, CachedStepCatchesCorruption) {
  std::shared_ptr<VerifiedBlob> blob = Open(/*verify_once=*/false);
  std::string out;
  ASSERT_TRUE(ReadVerified(*blob, 0, 1, &out).ok());
  CorruptBlock(5);
  BlockRead read;
  ASSERT_TRUE(blob->Load(0, 8, &read).ok());
  absl::Status status = blob->VerifyCached(&read);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_NE(status.message().find("offset 20480"), absl::string_view::npos)
      << status;
  EXPECT_EQ(read.next, 5);
  EXPECT_TRUE(read.data.empty());
}

// Fetch() and a wait for it, as the dispatcher runs them for a remote blob.
absl::Status FetchAndWait(VerifiedBlob& blob, uint64_t first, uint64_t end,
                          BlockRead* read) {
  absl::Notification done;
  absl::Status result;
  blob.Fetch(first, end, read, [&](absl::Status status) {
    result = status;
    done.Notify();
  });
  done.WaitForNotification();
  return result;
}

TEST_F(VerifiedBlobTest, FetchBringsTheDataAndTheMissingTreeFromARemoteStore) {
  auto local = store_->OpenBlob(DigestFromText(digest_));
  ASSERT_TRUE(local.ok());
  auto remote = std::make_shared<RemoteBlob>(*local);
  std::shared_ptr<VerifiedBlob> blob = *VerifiedBlob::Create(remote);
  EXPECT_FALSE(blob->IsLocal(100, 140));
  BlockRead read;
  EXPECT_EQ(blob->Load(100, 140, &read).code(),
            absl::StatusCode::kFailedPrecondition);
  read = BlockRead();
  ASSERT_TRUE(FetchAndWait(*blob, 100, 140, &read).ok());
  EXPECT_TRUE(read.loaded);
  // One read of the data; the top tree block and level-0 blocks 0 and 1 (for
  // data blocks 100..127 and 128..139): two runs, two reads.
  EXPECT_EQ(remote->reads(BlobPart::kData), 1);
  EXPECT_EQ(remote->reads(BlobPart::kTree), 2);
  ASSERT_TRUE(blob->VerifyRest(&read).ok());
  EXPECT_TRUE(read.verified());
  EXPECT_TRUE(read.data == data_.substr(100 * 4096, 40 * 4096));
  // The tree is cached now: a later fetch reads data only.
  BlockRead again;
  ASSERT_TRUE(FetchAndWait(*blob, 110, 120, &again).ok());
  EXPECT_EQ(remote->reads(BlobPart::kTree), 2);
  ASSERT_TRUE(blob->VerifyCached(&again).ok());
  EXPECT_TRUE(again.verified());
}

TEST_F(VerifiedBlobTest, FetchedCorruptionIsCaught) {
  CorruptBlock(130);
  auto local = store_->OpenBlob(DigestFromText(digest_));
  ASSERT_TRUE(local.ok());
  std::shared_ptr<VerifiedBlob> blob =
      *VerifiedBlob::Create(std::make_shared<RemoteBlob>(*local));
  BlockRead read;
  ASSERT_TRUE(FetchAndWait(*blob, 120, 140, &read).ok());
  absl::Status status = blob->VerifyRest(&read);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_NE(status.message().find("offset 532480"), absl::string_view::npos)
      << status;
  EXPECT_TRUE(read.data.empty());
}

}  // namespace
}  // namespace verity::server
