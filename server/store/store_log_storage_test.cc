// The transparency log on each store (a file store, an S3 store over
// FakeS3): LogSequencer appends through StoreLogStorage, the tiles it writes
// prove every entry, two sequencers racing on one store make one log, and
// the objects' paths are checked.

#include "server/store/store_log_storage.h"

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/tlog/log_prover.h"
#include "lib/tlog/log_sequencer.h"
#include "server/upkeep/testing/upkeep_stores.h"

namespace verity::server {
namespace {

class StoreLogStorageTest : public UpkeepTest {
 protected:
  void SetUp() override {
    Open(1);
    storage_ = std::make_shared<StoreLogStorage>(store_);
  }

  std::unique_ptr<tlog::LogSequencer> NewSequencer() {
    tlog::SequencerOptions options;
    options.origin = "verityd.example/log";
    options.key = key_;
    options.unique_name = [this] {
      absl::MutexLock lock(&mu_);
      return absl::StrCat("b", ++names_);
    };
    return *tlog::LogSequencer::Create(storage_, std::move(options));
  }

  std::shared_ptr<StoreLogStorage> storage_;
  std::shared_ptr<const Ed25519PrivateKey> key_ =
      std::make_shared<Ed25519PrivateKey>(
          *Ed25519PrivateKey::FromSeed(std::string(32, 'L')));
  absl::Mutex mu_;
  int names_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST_P(StoreLogStorageTest, AppendsAndProves) {
  std::unique_ptr<tlog::LogSequencer> sequencer = NewSequencer();
  std::vector<std::string> entries;
  for (int i = 0; i < 300; ++i) entries.push_back(absl::StrCat("entry ", i));
  ASSERT_TRUE(
      sequencer->Append(absl::MakeConstSpan(entries).subspan(0, 10)).ok());
  absl::StatusOr<tlog::AppendedBatch> appended =
      sequencer->Append(absl::MakeConstSpan(entries).subspan(10));
  ASSERT_TRUE(appended.ok()) << appended.status();
  EXPECT_EQ(appended->first_index, 10u);
  const tlog::Checkpoint& checkpoint = appended->checkpoint;
  const tlog::LogProver prover(storage_);
  for (uint64_t index : {0, 9, 10, 255, 256, 299}) {
    absl::StatusOr<std::vector<tlog::LogHash>> proof =
        prover.Inclusion(index, entries[index], checkpoint);
    EXPECT_TRUE(proof.ok()) << index << ": " << proof.status();
  }
  EXPECT_EQ(*store_->ReadLogObject("checkpoint"), appended->note);
  // Another server on the store reads the same checkpoint.
  absl::StatusOr<std::optional<tlog::SignedCheckpoint>> current =
      NewSequencer()->Current();
  ASSERT_TRUE(current.ok() && current->has_value()) << current.status();
  EXPECT_EQ((*current)->note, appended->note);
}

TEST_P(StoreLogStorageTest, TwoServersRacingMakeOneLog) {
  std::vector<std::thread> servers;
  for (int s = 0; s < 2; ++s) {
    servers.emplace_back([this, s] {
      std::unique_ptr<tlog::LogSequencer> sequencer = NewSequencer();
      for (int b = 0; b < 8; ++b) {
        std::vector<std::string> batch;
        for (int i = 0; i < 5; ++i) batch.push_back(absl::StrCat(s, b, i));
        EXPECT_TRUE(sequencer->Append(batch).ok());
      }
    });
  }
  for (std::thread& server : servers) server.join();
  absl::StatusOr<std::optional<tlog::SignedCheckpoint>> current =
      NewSequencer()->Current();
  ASSERT_TRUE(current.ok() && current->has_value()) << current.status();
  ASSERT_EQ((*current)->checkpoint.size, 80u);
  absl::StatusOr<std::vector<std::string>> entries =
      tlog::SplitBundle(*store_->ReadLogObject(
          tlog::TileFor(tlog::TileId::kEntries, 0, 80)->Path()));
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(std::set<std::string>(entries->begin(), entries->end()).size(),
            80u);
}

TEST_P(StoreLogStorageTest, ObjectPaths) {
  EXPECT_TRUE(store_->WriteLogObject("tile/0/x001/002.p/3", "x").ok());
  EXPECT_EQ(*store_->ReadLogObject("tile/0/x001/002.p/3"), "x");
  EXPECT_TRUE(store_->WriteLogObject("tile/0/x001/002.p/3", "y").ok());
  EXPECT_EQ(*store_->ReadLogObject("tile/0/x001/002.p/3"), "y");
  EXPECT_TRUE(store_->DeleteLogObject("tile/0/x001/002.p/3").ok());
  EXPECT_TRUE(store_->DeleteLogObject("tile/0/x001/002.p/3").ok());
  EXPECT_EQ(store_->ReadLogObject("tile/0/x001/002.p/3").status().code(),
            absl::StatusCode::kNotFound);
  for (const char* bad : {"", "/tile", "tile/", "tile//0", "../x", "a/../b",
                          "Tile", "a b", "tile/./0"}) {
    EXPECT_EQ(store_->WriteLogObject(bad, "x").code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_EQ(store_->ReadLogObject(bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST_P(StoreLogStorageTest, ListsAFolderAndSweepsStagedBatches) {
  const absl::Time before = absl::Now() - absl::Seconds(2);
  EXPECT_TRUE(store_->ListLogObjects("batches/", "")->objects.empty());
  std::unique_ptr<tlog::LogSequencer> sequencer = NewSequencer();
  ASSERT_TRUE(sequencer->Append({"a", "b"}).ok());
  // A server stopped between writing its batch and committing it.
  ASSERT_TRUE(store_->WriteLogObject("batches/left", "xyz").ok());
  absl::StatusOr<tlog::LogObjectPage> page =
      store_->ListLogObjects("batches/", "");
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].path, "batches/b1");
  EXPECT_EQ(page->objects[1].path, "batches/left");
  EXPECT_EQ(page->objects[1].bytes, 3u);
  EXPECT_GT(page->objects[1].written, before);
  EXPECT_TRUE(page->next.empty());
  page = store_->ListLogObjects("batches/", "batches/b1");
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].path, "batches/left");
  for (const char* bad : {"batches", "", "/", "../"}) {
    EXPECT_EQ(store_->ListLogObjects(bad, "").status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  // The state names b1: only the one left is swept.
  absl::StatusOr<tlog::SweptBatches> swept = tlog::SweepStagedBatches(
      *storage_, absl::Now() + absl::Seconds(1), /*dry_run=*/false);
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->objects, 1u);
  EXPECT_EQ(swept->bytes, 3u);
  page = store_->ListLogObjects("batches/", "");
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].path, "batches/b1");
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreLogStorageTest,
                         ::testing::Values(StoreFactory(NewTestFileStore),
                                           StoreFactory(NewTestS3Store)));

}  // namespace
}  // namespace verity::server
