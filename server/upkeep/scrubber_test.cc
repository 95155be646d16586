// Scrub: one blob checked whole on the file store, with a byte flipped in its
// data, tree or FEC area (repaired and written back with FEC, reported as
// damage without), parity checked from memory and from a second read; and
// passes over both stores: every blob once, resumed where a stopped pass
// left off, one pass at a time under the lease; and past the cache in front
// of a remote store.

#include "server/upkeep/scrubber.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/store/cache/caching_blob.h"
#include "server/store/cache/slab_cache.h"
#include "server/store/fec_repair.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/upkeep/blob_scrub.h"
#include "server/upkeep/lease.h"
#include "server/upkeep/testing/upkeep_stores.h"

namespace verity::server {
namespace {

constexpr uint64_t kBlock = 4096;

ScrubHooks RepairHooks() {
  ScrubHooks hooks;
  hooks.repair = [](std::shared_ptr<VerifiedBlob> blob,
                    const absl::Status& bad) -> absl::StatusOr<int> {
    const std::optional<uint64_t> block = BadBlockOf(bad);
    if (!block.has_value()) return bad;
    return RepairFecGroup(*blob, *block);
  };
  return hooks;
}

std::string Content(size_t size) {
  std::string data(size, '\0');
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(i * 131 + 7);
  return data;
}

class BlobScrubTest : public FileStoreFixture {
 protected:
  void SetUp() override {
    fec_roots_ = 4;
    FileStoreFixture::SetUp();
  }

  void PutContent(size_t size) {
    digest_ = MustPut(Content(size));
    dir_ = BlobDirFor(root_, digest_);
    pristine_ = Files();
  }

  std::vector<std::string> Files() {
    std::vector<std::string> files;
    for (const char* file : {"data", "tree", "fec"}) {
      absl::StatusOr<std::string> bytes =
          ReadWholeFile(absl::StrCat(dir_, "/", file));
      files.push_back(bytes.ok() ? *bytes : "");
    }
    return files;
  }

  void Flip(const char* file, uint64_t offset) {
    const std::string path = absl::StrCat(dir_, "/", file);
    absl::StatusOr<std::string> bytes = ReadWholeFile(path);
    ASSERT_TRUE(bytes.ok() && offset < bytes->size());
    (*bytes)[offset] ^= 0x20;
    ASSERT_TRUE(WriteWholeFile(path, *bytes).ok());
  }

  absl::StatusOr<BlobScrub> Scrub(const ScrubHooks& hooks = RepairHooks()) {
    absl::StatusOr<std::shared_ptr<const Blob>> blob =
        store_->OpenBlob(DigestFromText(digest_));
    if (!blob.ok()) return blob.status();
    return ScrubBlob(*std::move(blob), hooks);
  }

  std::string digest_;
  std::string dir_;
  std::vector<std::string> pristine_;
};

TEST_F(BlobScrubTest, ReadsEveryPartOnceAndFindsNothingInAGoodBlob) {
  PutContent(300 * kBlock + 123);
  absl::StatusOr<BlobScrub> scrub = Scrub();
  ASSERT_TRUE(scrub.ok()) << scrub.status();
  EXPECT_TRUE(scrub->damage.ok()) << scrub->damage;
  EXPECT_EQ(scrub->bad_blocks, 0u);
  EXPECT_EQ(scrub->bytes,
            pristine_[0].size() + pristine_[1].size() + pristine_[2].size());
}

TEST_F(BlobScrubTest, RepairsAFlippedDataByteAndWritesItBack) {
  PutContent(300 * kBlock + 123);
  Flip("data", 170 * kBlock + 5);
  absl::StatusOr<BlobScrub> scrub = Scrub();
  ASSERT_TRUE(scrub.ok()) << scrub.status();
  EXPECT_TRUE(scrub->damage.ok()) << scrub->damage;
  EXPECT_EQ(scrub->bad_blocks, 1u);
  EXPECT_EQ(scrub->repaired_blocks, 1u);
  EXPECT_EQ(Files(), pristine_);
}

TEST_F(BlobScrubTest, RepairsAFlippedTreeByte) {
  PutContent(300 * kBlock);
  Flip("tree", kBlock + 40);  // a level-0 block under the root's
  absl::StatusOr<BlobScrub> scrub = Scrub();
  ASSERT_TRUE(scrub.ok()) << scrub.status();
  EXPECT_TRUE(scrub->damage.ok()) << scrub->damage;
  EXPECT_EQ(scrub->repaired_blocks, 1u);
  EXPECT_EQ(Files(), pristine_);
}

TEST_F(BlobScrubTest, EncodesDamagedParityAgainFromMemoryOrASecondRead) {
  PutContent(600 * kBlock + 1);
  for (const uint64_t in_memory : {kMaxStreamedFecBytes, uint64_t{0}}) {
    SCOPED_TRACE(in_memory);
    Flip("fec", 3 * kBlock + 9);
    Flip("fec", 4 * kBlock + 9);
    ScrubHooks hooks = RepairHooks();
    hooks.max_parity_in_memory = in_memory;
    absl::StatusOr<BlobScrub> scrub = Scrub(hooks);
    ASSERT_TRUE(scrub.ok()) << scrub.status();
    EXPECT_TRUE(scrub->damage.ok()) << scrub->damage;
    EXPECT_EQ(scrub->bad_blocks, 2u);
    EXPECT_EQ(scrub->repaired_blocks, 2u);
    EXPECT_EQ(Files(), pristine_);
  }
}

TEST_F(BlobScrubTest, ReportsDamageItCannotRepair) {
  PutContent(300 * kBlock);
  // Five flips in one RS group of four roots: more erasures than roots.
  const uint64_t rounds = 2;  // ceil((300 + 4 tree blocks) / 251)
  for (uint64_t j = 0; j < 5; ++j) Flip("data", j * rounds * kBlock + 3);
  absl::StatusOr<BlobScrub> scrub = Scrub();
  ASSERT_TRUE(scrub.ok()) << scrub.status();
  EXPECT_TRUE(absl::IsDataLoss(scrub->damage)) << scrub->damage;
  EXPECT_FALSE(IsTreeCorruption(scrub->damage));
  EXPECT_EQ(BadBlockOf(scrub->damage), std::optional<uint64_t>(0));
  EXPECT_EQ(scrub->repaired_blocks, 0u);
}

class BlobScrubWithoutFecTest : public BlobScrubTest {
 protected:
  void SetUp() override {
    FileStoreFixture::SetUp();  // fec_roots_ 0
  }
};

TEST_F(BlobScrubWithoutFecTest, ReportsAFlippedByteAsTheReadWould) {
  PutContent(300 * kBlock);
  Flip("data", 77 * kBlock + 1);
  absl::StatusOr<BlobScrub> scrub = Scrub();
  ASSERT_TRUE(scrub.ok()) << scrub.status();
  EXPECT_TRUE(absl::IsDataLoss(scrub->damage)) << scrub->damage;
  EXPECT_EQ(BadBlockOf(scrub->damage), std::optional<uint64_t>(77));
  EXPECT_EQ(scrub->bad_blocks, 1u);
  EXPECT_EQ(scrub->repaired_blocks, 0u);
}

// A read through the cache in front of a remote store keeps what it fetched;
// a scrub reads past the cache (Blob::Stored), so it finds a flip in the
// store that the cache hides from reads.
TEST_F(BlobScrubWithoutFecTest, ReadsPastTheCacheInFrontOfTheStore) {
  const uint64_t size = 300 * kBlock;
  PutContent(size);
  absl::StatusOr<std::shared_ptr<const Blob>> stored =
      store_->OpenBlob(DigestFromText(digest_));
  ASSERT_TRUE(stored.ok()) << stored.status();
  SlabCacheOptions slabs;
  slabs.slab_bytes = 64 << 10;
  auto cached = std::make_shared<CachingBlob>(
      *std::move(stored), std::make_shared<SlabCache>(slabs, nullptr));
  ASSERT_EQ(*ReadBlobPart(*cached, BlobPart::kData, 0, size), Content(size));
  Flip("data", 77 * kBlock + 1);
  EXPECT_EQ(*ReadBlobPart(*cached, BlobPart::kData, 77 * kBlock, kBlock),
            Content(size).substr(77 * kBlock, kBlock));

  absl::StatusOr<BlobScrub> scrub = ScrubBlob(cached, RepairHooks());
  ASSERT_TRUE(scrub.ok()) << scrub.status();
  EXPECT_TRUE(absl::IsDataLoss(scrub->damage)) << scrub->damage;
  EXPECT_EQ(BadBlockOf(scrub->damage), std::optional<uint64_t>(77));
}

TEST(ScrubPositionTest, EncodesAndDecodes) {
  ScrubPosition position{absl::FromUnixSeconds(1700000000),
                         "sha256:" + std::string(64, 'a'),
                         absl::FromUnixSeconds(1600000000)};
  absl::StatusOr<ScrubPosition> decoded =
      DecodeScrubPosition(EncodeScrubPosition(position));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->started, position.started);
  EXPECT_EQ(decoded->after, position.after);
  EXPECT_EQ(decoded->completed, position.completed);
  EXPECT_TRUE(DecodeScrubPosition(EncodeScrubPosition({})).ok());
  for (const char* bad :
       {"", "verity-scrub 1\nstarted 1\nafter nope\ncompleted 2\n",
        "verity-scrub 2\nstarted 1\nafter -\ncompleted 2\n",
        "verity-scrub 1\nstarted -1\nafter -\ncompleted 2\n"}) {
    EXPECT_TRUE(absl::IsDataLoss(DecodeScrubPosition(bad).status())) << bad;
  }
}

class ScrubPassTest : public UpkeepTest {
 protected:
  void SetUp() override {
    Open(2);
    for (int i = 0; i < 5; ++i) blobs_.push_back(Put(absl::StrCat("blob ", i)));
  }

  ScrubPassOptions Options() {
    ScrubPassOptions options;
    options.holder = "test";
    options.log = [this](absl::string_view line) {
      log_.push_back(std::string(line));
    };
    options.cancel = &cancel_;
    return options;
  }

  std::vector<TestBlob> blobs_;
  std::vector<std::string> log_;
  std::atomic<bool> cancel_{false};
};

TEST_P(ScrubPassTest, ChecksEveryBlobOnceAndRecordsTheCompletedPass) {
  absl::StatusOr<ScrubReport> report = RunScrubPass(*store_, Options());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->blobs, 5u);
  EXPECT_FALSE(report->resumed);
  EXPECT_EQ(report->unrepairable + report->unread + report->bad_blocks, 0u);
  absl::StatusOr<ScrubPosition> position = ReadScrubPosition(*store_);
  ASSERT_TRUE(position.ok()) << position.status();
  EXPECT_EQ(position->started, absl::UnixEpoch());
  EXPECT_EQ(position->completed, report->completed);
  EXPECT_TRUE(log_.empty());
}

TEST_P(ScrubPassTest, ResumesWhereAStoppedPassLeftOff) {
  ScrubPassOptions options = Options();
  options.save_every = absl::ZeroDuration();
  int checked = 0;
  options.checked = [&](const BlobScrub&) {
    if (++checked == 2) cancel_ = true;
  };
  absl::StatusOr<ScrubReport> stopped = RunScrubPass(*store_, options);
  EXPECT_TRUE(absl::IsCancelled(stopped.status())) << stopped.status();
  absl::StatusOr<ScrubPosition> position = ReadScrubPosition(*store_);
  ASSERT_TRUE(position.ok()) << position.status();
  EXPECT_NE(position->started, absl::UnixEpoch());
  EXPECT_FALSE(position->after.empty());
  EXPECT_EQ(position->completed, absl::UnixEpoch());

  cancel_ = false;
  absl::StatusOr<ScrubReport> rest = RunScrubPass(*store_, Options());
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_TRUE(rest->resumed);
  EXPECT_EQ(rest->blobs, 3u);
}

TEST_P(ScrubPassTest, WaitsForTheReplicaThatHoldsTheLease) {
  const absl::Time now = absl::Now();
  absl::StatusOr<StoreLease> held = StoreLease::Acquire(
      *store_, kScrubLease, "replica-2", now, now, absl::Minutes(2));
  ASSERT_TRUE(held.ok()) << held.status();
  absl::StatusOr<ScrubReport> busy = RunScrubPass(*store_, Options());
  EXPECT_TRUE(absl::IsAborted(busy.status())) << busy.status();
  EXPECT_NE(busy.status().message().find("scrub by replica-2"),
            std::string::npos)
      << busy.status();
  held->Release();
  EXPECT_TRUE(RunScrubPass(*store_, Options()).ok());
}

TEST_P(ScrubPassTest, StopsWhenThePaceSaysSo) {
  ScrubPassOptions options = Options();
  options.hooks.pace = [](uint64_t) {
    return absl::CancelledError("the scrub was stopped");
  };
  EXPECT_TRUE(absl::IsCancelled(RunScrubPass(*store_, options).status()));
}

INSTANTIATE_TEST_SUITE_P(BothStores, ScrubPassTest,
                         ::testing::Values(StoreFactory(NewTestFileStore),
                                           StoreFactory(NewTestS3Store)));

}  // namespace
}  // namespace verity::server
