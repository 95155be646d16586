// Chunk against a real store, local and remote: the cheap step stops where
// the cached tree ends and the rest hashes only what is left; a fetch brings
// the data and the missing tree, always later; a chunk owns its buffers, so
// dropping it with a fetch in flight is safe; corruption found by any step
// leaves no data behind.

#include "server/dispatch/chunk.h"

#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "lib/base/buffer_pool.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/testing/remote_blob.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

class ChunkTest : public FileStoreFixture {
 protected:
  void SetUp() override {
    FileStoreFixture::SetUp();
    data_ = MakeData(200 * 4096 + 5, 1);
    digest_ = MustPut(data_);
  }

  std::shared_ptr<const Blob> Stored() {
    auto blob = store_->OpenBlob(DigestFromText(digest_));
    EXPECT_TRUE(blob.ok()) << blob.status();
    return *blob;
  }

  std::shared_ptr<VerifiedBlob> Local() {
    return *VerifiedBlob::Create(Stored());
  }

  void CorruptBlock(uint64_t block) {
    FlipStoredDataBit(digest_, block * 4096 + 10);
  }

  std::string data_;
  std::string digest_;
  std::shared_ptr<BufferPool> buffers_ = BufferPool::Create({});
};

// FetchLater() and a wait for it; true in `inside` if it completed on the
// calling thread, so inside the call (which it must never do).
absl::Status FetchAndWait(Chunk& chunk, bool* inside) {
  absl::Notification done;
  absl::Status result;
  const std::thread::id caller = std::this_thread::get_id();
  chunk.FetchLater([&](absl::Status status) {
    *inside = std::this_thread::get_id() == caller;
    result = status;
    done.Notify();
  });
  done.WaitForNotification();
  return result;
}

TEST_F(ChunkTest, StepsResumeWhereTheCachedTreeEnds) {
  std::shared_ptr<VerifiedBlob> blob = Local();
  // Nothing cached: the cheap step verifies nothing and reads no tree block.
  auto cold = std::make_shared<Chunk>(blob, BlockRange{0, 4}, buffers_);
  ASSERT_EQ(cold->TryLoadNow(), absl::OkStatus());
  ASSERT_TRUE(cold->VerifyCached().ok());
  EXPECT_EQ(cold->next(), 0);
  EXPECT_EQ(blob->cached_tree_bytes(), 0);

  std::string out;
  ASSERT_TRUE(ReadVerified(*blob, 0, 10, &out).ok());
  ASSERT_EQ(blob->data_blocks_hashed(), 10);
  auto chunk = std::make_shared<Chunk>(blob, BlockRange{100, 201}, buffers_);
  ASSERT_EQ(chunk->TryLoadNow(), absl::OkStatus());
  ASSERT_TRUE(chunk->VerifyCached().ok());
  EXPECT_EQ(chunk->next(), 128);
  EXPECT_FALSE(chunk->verified());
  EXPECT_EQ(blob->data_blocks_hashed(), 10 + 28);
  // The rest reads the missing tree block and hashes only blocks 128..200.
  ASSERT_EQ(chunk->TryFinishNow(), absl::OkStatus());
  EXPECT_TRUE(chunk->verified());
  EXPECT_EQ(blob->data_blocks_hashed(), 10 + 28 + 73);
  EXPECT_TRUE(StringOf(chunk->TakeData()) == data_.substr(100 * 4096));
}

TEST_F(ChunkTest, CachedStepCatchesCorruption) {
  std::shared_ptr<VerifiedBlob> blob = Local();
  std::string out;
  ASSERT_TRUE(ReadVerified(*blob, 0, 1, &out).ok());
  CorruptBlock(5);
  auto chunk = std::make_shared<Chunk>(blob, BlockRange{0, 8}, buffers_);
  ASSERT_EQ(chunk->TryLoadNow(), absl::OkStatus());
  absl::Status status = chunk->VerifyCached();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_NE(status.message().find("offset 20480"), absl::string_view::npos)
      << status;
  EXPECT_EQ(chunk->next(), 5);
  EXPECT_EQ(chunk->data_bytes(), 0);
  EXPECT_FALSE(chunk->loaded());
  // The failed data's buffer (8 blocks) went back to the pool.
  EXPECT_EQ(buffers_->stats().idle_bytes, 8 * 4096u);
}

TEST_F(ChunkTest, BuffersComeFromThePoolAndGoBack) {
  std::shared_ptr<VerifiedBlob> blob = Local();
  auto first = std::make_shared<Chunk>(blob, BlockRange{0, 8}, buffers_);
  ASSERT_EQ(first->TryFinishNow(), absl::OkStatus());
  Buffer data = first->TakeData();
  EXPECT_EQ(StringOf(data), data_.substr(0, 8 * 4096));
  // The data's buffer and, back already, the tree blocks' one.
  EXPECT_EQ(buffers_->stats().allocated, 2u);
  EXPECT_EQ(buffers_->stats().idle_bytes, 4096u);
  // The same size again: the buffer the first chunk's data had.
  const uint8_t* first_memory = data.data();
  data = Buffer();
  auto second = std::make_shared<Chunk>(blob, BlockRange{8, 16}, buffers_);
  ASSERT_EQ(second->TryFinishNow(), absl::OkStatus());
  const Buffer second_data = second->TakeData();
  EXPECT_EQ(second_data.data(), first_memory);
  EXPECT_EQ(StringOf(second_data), data_.substr(8 * 4096, 8 * 4096));
  const BufferPoolStats stats = buffers_->stats();
  EXPECT_EQ(stats.allocated, 2u);
  EXPECT_EQ(stats.reused, 1u);
  // A chunk larger than the pool's buffers gets a one-off one.
  BufferPoolOptions small;
  small.max_buffer_bytes = 4 * 4096;
  auto third = std::make_shared<Chunk>(blob, BlockRange{16, 24},
                                       BufferPool::Create(small));
  ASSERT_EQ(third->TryFinishNow(), absl::OkStatus());
  EXPECT_EQ(StringOf(third->TakeData()), data_.substr(16 * 4096, 8 * 4096));
}

TEST_F(ChunkTest, FetchBringsTheDataAndTheMissingTreeFromARemoteStore) {
  auto remote = std::make_shared<RemoteBlob>(Stored());
  std::shared_ptr<VerifiedBlob> blob = *VerifiedBlob::Create(remote);
  auto chunk = std::make_shared<Chunk>(blob, BlockRange{100, 140}, buffers_);
  // Nothing of a remote blob is here, and asking starts nothing.
  EXPECT_FALSE(chunk->TryLoadNow().has_value());
  EXPECT_FALSE(chunk->TryFinishNow().has_value());
  EXPECT_EQ(remote->reads(BlobPart::kData), 0);
  bool inside = true;
  ASSERT_TRUE(FetchAndWait(*chunk, &inside).ok());
  EXPECT_FALSE(inside);
  EXPECT_TRUE(chunk->loaded());
  // One read of the data; the top tree block and level-0 blocks 0 and 1 (for
  // data blocks 100..127 and 128..139): two runs, two reads.
  EXPECT_EQ(remote->reads(BlobPart::kData), 1);
  EXPECT_EQ(remote->reads(BlobPart::kTree), 2);
  ASSERT_EQ(chunk->TryFinishNow(), absl::OkStatus());
  EXPECT_TRUE(chunk->verified());
  EXPECT_TRUE(StringOf(chunk->TakeData()) ==
              data_.substr(100 * 4096, 40 * 4096));
  // The tree is cached now: a later fetch reads data only.
  auto again = std::make_shared<Chunk>(blob, BlockRange{110, 120}, buffers_);
  ASSERT_TRUE(FetchAndWait(*again, &inside).ok());
  EXPECT_FALSE(inside);
  EXPECT_EQ(remote->reads(BlobPart::kTree), 2);
  ASSERT_TRUE(again->VerifyCached().ok());
  EXPECT_TRUE(again->verified());
}

TEST_F(ChunkTest, AFetchWithNothingLeftToReadStillCompletesLater) {
  std::shared_ptr<VerifiedBlob> blob = Local();
  auto chunk = std::make_shared<Chunk>(blob, BlockRange{0, 4}, buffers_);
  ASSERT_EQ(chunk->TryLoadNow(), absl::OkStatus());
  std::string out;
  ASSERT_TRUE(ReadVerified(*blob, 0, 1, &out).ok());  // the tree is cached
  bool inside = true;
  ASSERT_TRUE(FetchAndWait(*chunk, &inside).ok());
  EXPECT_FALSE(inside);
  ASSERT_EQ(chunk->TryFinishNow(), absl::OkStatus());
  EXPECT_TRUE(StringOf(chunk->TakeData()) == data_.substr(0, 4 * 4096));
}

TEST_F(ChunkTest, ADroppedChunkIsKeptAliveByItsFetch) {
  auto remote = std::make_shared<RemoteBlob>(Stored());
  std::shared_ptr<VerifiedBlob> blob = *VerifiedBlob::Create(remote);
  absl::Notification done;
  std::weak_ptr<Chunk> watched;
  {
    auto chunk = std::make_shared<Chunk>(blob, BlockRange{0, 200}, buffers_);
    watched = chunk;
    chunk->FetchLater([&done](absl::Status status) {
      EXPECT_TRUE(status.ok()) << status;
      done.Notify();
    });
  }  // the job restarted or went away: only the fetch holds the chunk now
  done.WaitForNotification();
  // Released once its completion has run (on the store's thread).
  for (int i = 0; i < 1000 && !watched.expired(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(watched.expired());
}

TEST_F(ChunkTest, FetchedCorruptionIsCaught) {
  CorruptBlock(130);
  std::shared_ptr<VerifiedBlob> blob =
      *VerifiedBlob::Create(std::make_shared<RemoteBlob>(Stored()));
  auto chunk = std::make_shared<Chunk>(blob, BlockRange{120, 140}, buffers_);
  bool inside = true;
  ASSERT_TRUE(FetchAndWait(*chunk, &inside).ok());
  std::optional<absl::Status> status = chunk->TryFinishNow();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code(), absl::StatusCode::kDataLoss) << *status;
  EXPECT_NE(status->message().find("offset 532480"), absl::string_view::npos)
      << *status;
  EXPECT_EQ(chunk->data_bytes(), 0);
}

}  // namespace
}  // namespace verity::server
