// LogProver over a log a sequencer wrote: every entry's inclusion proof and
// every consistency proof between its checkpoints verify; tiles changed in
// the storage are DATA_LOSS, never a proof.

#include "lib/tlog/log_prover.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/tlog/log_sequencer.h"
#include "lib/tlog/memory_log_storage.h"

namespace verity::tlog {
namespace {

class LogProverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SequencerOptions options;
    options.origin = "verityd.example/log";
    options.key = std::make_shared<const Ed25519PrivateKey>(
        Ed25519PrivateKey::Generate());
    options.unique_name = [this] { return absl::StrCat(++names_); };
    absl::StatusOr<std::unique_ptr<LogSequencer>> sequencer =
        LogSequencer::Create(storage_, std::move(options));
    ASSERT_TRUE(sequencer.ok()) << sequencer.status();
    // Batches of 1, 2, ... 40 entries: 820, across three full tiles and
    // checkpoints at many partial widths.
    for (int batch = 1; batch <= 40; ++batch) {
      std::vector<std::string> entries;
      for (int i = 0; i < batch; ++i) {
        entries.push_back(absl::StrCat("entry ", entries_.size() + i));
      }
      absl::StatusOr<AppendedBatch> appended = (*sequencer)->Append(entries);
      ASSERT_TRUE(appended.ok()) << appended.status();
      entries_.insert(entries_.end(), entries.begin(), entries.end());
      checkpoints_.push_back(appended->checkpoint);
    }
  }

  std::shared_ptr<MemoryLogStorage> storage_ =
      std::make_shared<MemoryLogStorage>();
  int names_ = 0;
  std::vector<std::string> entries_;
  std::vector<Checkpoint> checkpoints_;
};

TEST_F(LogProverTest, ProvesEveryEntryUnderEveryCheckpoint) {
  const LogProver prover(storage_);
  for (const Checkpoint& checkpoint :
       {checkpoints_[0], checkpoints_[21], checkpoints_.back()}) {
    for (uint64_t index = 0; index < checkpoint.size; ++index) {
      absl::StatusOr<std::vector<LogHash>> proof =
          prover.Inclusion(index, entries_[index], checkpoint);
      ASSERT_TRUE(proof.ok()) << index << ": " << proof.status();
      EXPECT_TRUE(VerifyInclusion(index, checkpoint.size,
                                  LeafHash(entries_[index]), *proof,
                                  checkpoint.root)
                      .ok());
    }
  }
  // Another entry at that index, or an index past the size, is no proof.
  EXPECT_TRUE(absl::IsDataLoss(
      prover.Inclusion(5, "forged", checkpoints_.back()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      prover.Inclusion(checkpoints_[3].size, "x", checkpoints_[3]).status()));
}

TEST_F(LogProverTest, ProvesConsistencyBetweenEveryPairOfCheckpoints) {
  const LogProver prover(storage_);
  for (size_t old = 0; old < checkpoints_.size(); old += 3) {
    for (size_t now = old; now < checkpoints_.size(); now += 5) {
      const Checkpoint& a = checkpoints_[old];
      const Checkpoint& b = checkpoints_[now];
      absl::StatusOr<std::vector<LogHash>> proof =
          prover.Consistency(a.size, b.size, checkpoints_.back());
      ASSERT_TRUE(proof.ok()) << a.size << " " << b.size << proof.status();
      EXPECT_TRUE(
          VerifyConsistency(a.size, b.size, a.root, b.root, *proof).ok());
    }
  }
  EXPECT_TRUE(absl::IsInvalidArgument(
      prover.Consistency(0, 5, checkpoints_.back()).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(prover
                                          .Consistency(checkpoints_[4].size,
                                                       checkpoints_[3].size,
                                                       checkpoints_.back())
                                          .status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      prover.Consistency(1, checkpoints_[4].size, checkpoints_[3]).status()));
}

TEST_F(LogProverTest, ChangedTilesAreDataLossNotAProof) {
  const Checkpoint& last = checkpoints_.back();
  std::string tile = storage_->objects().at("tile/0/001");
  tile[7] ^= 1;
  storage_->SetObject("tile/0/001", tile);
  const LogProver prover(storage_);
  const absl::Status inclusion =
      prover.Inclusion(300, entries_[300], last).status();
  EXPECT_TRUE(absl::IsDataLoss(inclusion)) << inclusion;
  const absl::Status consistency =
      prover.Consistency(checkpoints_[25].size, last.size, last).status();
  EXPECT_TRUE(absl::IsDataLoss(consistency)) << consistency;
  // An entry whose proof needs no changed hash is still proved.
  EXPECT_TRUE(prover.Inclusion(600, entries_[600], last).ok());
}

TEST_F(LogProverTest, ProvesTheSameThroughItsTileCache) {
  const LogProver uncached(storage_);
  const LogProver cached(storage_, 1 << 20);
  const Checkpoint& last = checkpoints_.back();
  for (int pass = 0; pass < 2; ++pass) {
    for (uint64_t index = 0; index < last.size; index += 7) {
      EXPECT_EQ(*cached.Inclusion(index, entries_[index], last),
                *uncached.Inclusion(index, entries_[index], last));
    }
    for (size_t old = 0; old < checkpoints_.size(); old += 9) {
      EXPECT_EQ(*cached.Consistency(checkpoints_[old].size, last.size, last),
                *uncached.Consistency(checkpoints_[old].size, last.size, last));
    }
  }
  // What it keeps is what it read: a tile changed in the storage since is
  // not seen (tiles never change in a log), nor a tile removed.
  std::string tile = storage_->objects().at("tile/0/001");
  tile[7] ^= 1;
  storage_->SetObject("tile/0/001", tile);
  EXPECT_TRUE(cached.Inclusion(300, entries_[300], last).ok());
  EXPECT_TRUE(
      absl::IsDataLoss(uncached.Inclusion(300, entries_[300], last).status()));
  // A cache too small for one tile keeps none, and proves all the same.
  const LogProver tiny(storage_, 100);
  EXPECT_TRUE(tiny.Inclusion(600, entries_[600], last).ok());
  EXPECT_TRUE(
      absl::IsDataLoss(tiny.Inclusion(300, entries_[300], last).status()));
}

}  // namespace
TEST_F(LogProverTest, AnswersNowFromCachedTilesOnly) {
  const Checkpoint& last = checkpoints_.back();  // 820 entries
  const Checkpoint& older = checkpoints_[25];
  const LogProver uncached(storage_);
  const LogProver cached(storage_, 1 << 20);
  // Nothing cached, or no cache: not now.
  EXPECT_FALSE(cached.TryInclusionNow(800, entries_[800], last).has_value());
  EXPECT_FALSE(uncached.TryInclusionNow(800, entries_[800], last).has_value());
  // Warm() reads the right edge: the last tile of each level.
  ASSERT_TRUE(cached.Warm(last).ok());
  const std::vector<LogHash> expected =
      *uncached.Inclusion(800, entries_[800], last);
  // With every tile gone from the storage, what is cached still answers:
  // a call that answers now reads nothing there.
  const std::map<std::string, std::string> objects = storage_->objects();
  for (const auto& [path, bytes] : objects) {
    if (absl::StartsWith(path, "tile/"))
      ASSERT_TRUE(storage_->Delete(path).ok());
  }
  std::optional<absl::StatusOr<std::vector<LogHash>>> now =
      cached.TryInclusionNow(800, entries_[800], last);
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(**now, expected);
  // An entry in a full tile before the edge: its tile is not cached.
  EXPECT_FALSE(cached.TryInclusionNow(10, entries_[10], last).has_value());
  EXPECT_FALSE(
      cached.TryConsistencyNow(older.size, last.size, last).has_value());
  for (const auto& [path, bytes] : objects) storage_->SetObject(path, bytes);
  // Once a proof has read them (Inclusion, Consistency), they answer now.
  ASSERT_TRUE(cached.Inclusion(10, entries_[10], last).ok());
  ASSERT_TRUE(cached.Consistency(older.size, last.size, last).ok());
  now = cached.TryInclusionNow(10, entries_[10], last);
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(**now, *uncached.Inclusion(10, entries_[10], last));
  now = cached.TryConsistencyNow(older.size, last.size, last);
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(**now, *uncached.Consistency(older.size, last.size, last));
  // What is not a proof is still refused now, not deferred.
  now = cached.TryInclusionNow(10, "another entry", last);
  ASSERT_TRUE(now.has_value());
  EXPECT_TRUE(absl::IsDataLoss(now->status())) << now->status();
}

}  // namespace verity::tlog
