// VerifiedBlob against a real store: corruption on disk is caught on every
// read, unless verify_once remembers that the block was already verified.

#include "server/store/verified_blob.h"

#include <string>

#include "gtest/gtest.h"
#include "server/store/file/testing/file_store.h"

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
    FlipStoredDataBit(digest_, block * 4096 + 10);
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

TEST_F(VerifiedBlobTest, VerifiableUpToEndsWhereTheCachedTreeEnds) {
  std::shared_ptr<VerifiedBlob> blob = Open(/*verify_once=*/false);
  EXPECT_EQ(blob->VerifiableUpTo(0, 4), 0);
  std::string out;
  // Level-0 tree block 0 covers data blocks [0, 128) with SHA-256 and 4 KiB.
  ASSERT_TRUE(ReadVerified(*blob, 0, 1, &out).ok());
  EXPECT_EQ(blob->VerifiableUpTo(100, 201), 128);
  EXPECT_EQ(blob->MissingTree(100, 201).size(), 1u);
  EXPECT_TRUE(blob->MissingTree(0, 128).empty());
}

}  // namespace
}  // namespace verity::server
