// LogSequencer over a storage it shares: every append under a signed
// checkpoint whose tiles prove it; servers racing make one log; a server
// stopped between its commit and its tiles loses nothing; a storage that
// rolls back, forks, or changes a batch, a tile or the checkpoint is caught.

#include "lib/tlog/log_sequencer.h"

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/tlog/log_prover.h"
#include "lib/tlog/memory_log_storage.h"

namespace verity::tlog {
namespace {

constexpr char kOrigin[] = "verityd.example/log";

class LogSequencerTest : public ::testing::Test {
 protected:
  std::unique_ptr<LogSequencer> NewSequencer(
      std::shared_ptr<const Ed25519PrivateKey> key = nullptr) {
    SequencerOptions options;
    options.origin = kOrigin;
    options.key = key != nullptr ? key : key_;
    options.unique_name = [this] { return absl::StrCat(++names_); };
    absl::StatusOr<std::unique_ptr<LogSequencer>> sequencer =
        LogSequencer::Create(storage_, std::move(options));
    EXPECT_TRUE(sequencer.ok()) << sequencer.status();
    return *std::move(sequencer);
  }

  // Every entry of the log of `size` entries, read from its bundles.
  std::vector<std::string> AllEntries(uint64_t size) {
    std::vector<std::string> entries;
    for (uint64_t index = 0; index < size; index += kTileWidth) {
      absl::StatusOr<TileId> id = TileFor(TileId::kEntries, index, size);
      EXPECT_TRUE(id.ok());
      absl::StatusOr<std::string> bundle = storage_->Read(id->Path());
      EXPECT_TRUE(bundle.ok()) << id->Path();
      absl::StatusOr<std::vector<std::string>> split = SplitBundle(*bundle);
      EXPECT_TRUE(split.ok()) << id->Path();
      for (std::string& entry : *split) entries.push_back(std::move(entry));
    }
    return entries;
  }

  // The entry at `index` is proved under `checkpoint` by the stored tiles.
  void ExpectProved(uint64_t index, const std::string& entry,
                    const Checkpoint& checkpoint) {
    absl::StatusOr<std::vector<LogHash>> proof =
        LogProver(storage_).Inclusion(index, entry, checkpoint);
    EXPECT_TRUE(proof.ok()) << index << ": " << proof.status();
  }

  // The storage fails every write of an object under `prefix` (a server
  // stopped there), until SetWriteHook(nullptr).
  void FailWritesUnder(std::string prefix) {
    storage_->SetWriteHook([prefix](absl::string_view path) {
      return absl::StartsWith(path, prefix)
                 ? absl::UnavailableError("the writer stopped")
                 : absl::OkStatus();
    });
  }

  static std::vector<std::string> Batch(absl::string_view tag, int count) {
    std::vector<std::string> entries;
    for (int i = 0; i < count; ++i) entries.push_back(absl::StrCat(tag, i));
    return entries;
  }

  std::shared_ptr<MemoryLogStorage> storage_ =
      std::make_shared<MemoryLogStorage>();
  std::shared_ptr<const Ed25519PrivateKey> key_ =
      std::make_shared<Ed25519PrivateKey>(
          *Ed25519PrivateKey::FromSeed(std::string(32, 'L')));
  std::atomic<int> names_{0};
};

TEST_F(LogSequencerTest, EveryBatchUnderASignedCheckpointThatProvesIt) {
  std::unique_ptr<LogSequencer> sequencer = NewSequencer();
  EXPECT_FALSE(sequencer->Current()->has_value());
  uint64_t expected_first = 0;
  for (int count : {1, 300, 2, 1}) {
    const std::vector<std::string> batch =
        Batch(absl::StrCat(count, "-"), count);
    absl::StatusOr<AppendedBatch> appended = sequencer->Append(batch);
    ASSERT_TRUE(appended.ok()) << appended.status();
    EXPECT_EQ(appended->first_index, expected_first);
    expected_first += count;
    EXPECT_EQ(appended->checkpoint.size, expected_first);
    // The note is the checkpoint, signed by the log's key.
    absl::StatusOr<SignedNote> note = ParseNote(appended->note);
    ASSERT_TRUE(note.ok());
    EXPECT_EQ(note->text, appended->checkpoint.ToText());
    EXPECT_EQ(VerifyNote(*note, absl::MakeConstSpan(&sequencer->note_key(), 1))
                  ->size(),
              1u);
    for (int i = 0; i < count; ++i) {
      ExpectProved(appended->first_index + i, batch[i], appended->checkpoint);
    }
    EXPECT_EQ(storage_->Read("checkpoint").value_or(""), appended->note);
  }
  EXPECT_EQ(AllEntries(expected_first).size(), expected_first);
  // Staged batches are deleted once the tiles hold them (but the last).
  int batches = 0;
  for (const auto& [path, bytes] : storage_->objects()) {
    batches += absl::StartsWith(path, "batches/");
  }
  EXPECT_EQ(batches, 1);
  absl::StatusOr<std::optional<SignedCheckpoint>> current =
      NewSequencer()->Current();
  ASSERT_TRUE(current.ok() && current->has_value()) << current.status();
  EXPECT_EQ((*current)->checkpoint.size, expected_first);
}

TEST_F(LogSequencerTest, ServersRacingMakeOneLog) {
  constexpr int kServers = 3, kBatches = 20, kPerBatch = 7;
  std::vector<std::thread> servers;
  std::vector<std::vector<AppendedBatch>> landed(kServers);
  for (int s = 0; s < kServers; ++s) {
    servers.emplace_back([this, s, &landed] {
      std::unique_ptr<LogSequencer> sequencer = NewSequencer();
      for (int b = 0; b < kBatches; ++b) {
        absl::StatusOr<AppendedBatch> appended =
            sequencer->Append(Batch(absl::StrCat(s, "/", b, "/"), kPerBatch));
        ASSERT_TRUE(appended.ok()) << appended.status();
        landed[s].push_back(*appended);
      }
    });
  }
  for (std::thread& server : servers) server.join();
  absl::StatusOr<std::optional<SignedCheckpoint>> current =
      NewSequencer()->Current();
  ASSERT_TRUE(current.ok() && current->has_value()) << current.status();
  const uint64_t size = (*current)->checkpoint.size;
  ASSERT_EQ(size, uint64_t{kServers * kBatches * kPerBatch});
  // Every entry once, each batch whole and where its append said.
  const std::vector<std::string> entries = AllEntries(size);
  EXPECT_EQ(std::set<std::string>(entries.begin(), entries.end()).size(),
            entries.size());
  for (int s = 0; s < kServers; ++s) {
    for (int b = 0; b < kBatches; ++b) {
      const AppendedBatch& appended = landed[s][b];
      for (int i = 0; i < kPerBatch; ++i) {
        EXPECT_EQ(entries[appended.first_index + i],
                  absl::StrCat(s, "/", b, "/", i));
      }
    }
  }
}

TEST_F(LogSequencerTest, ABatchCommittedWithoutItsTilesIsIntegratedByTheNext) {
  std::unique_ptr<LogSequencer> first = NewSequencer();
  ASSERT_TRUE(first->Append(Batch("a", 10)).ok());
  // Stopped after its commit: no tile is written.
  FailWritesUnder("tile/");
  absl::StatusOr<AppendedBatch> committed = first->Append(Batch("b", 300));
  ASSERT_TRUE(committed.ok()) << committed.status();
  storage_->SetWriteHook(nullptr);
  // Another server reads the log: the tiles are written from the batch.
  std::unique_ptr<LogSequencer> second = NewSequencer();
  absl::StatusOr<std::optional<SignedCheckpoint>> current = second->Current();
  ASSERT_TRUE(current.ok() && current->has_value()) << current.status();
  EXPECT_EQ((*current)->checkpoint.size, 310u);
  ExpectProved(309, "b299", committed->checkpoint);
  // And it appends after them.
  absl::StatusOr<AppendedBatch> next = second->Append(Batch("c", 1));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->first_index, 310u);
  EXPECT_EQ(AllEntries(311)[10], "b0");
}

TEST_F(LogSequencerTest, ASweepDeletesOnlyBatchesNoAppendNeeds) {
  std::unique_ptr<LogSequencer> first = NewSequencer();
  ASSERT_TRUE(first->Append(Batch("a", 10)).ok());
  // Committed without its tiles: its batch is the one the state names.
  FailWritesUnder("tile/");
  ASSERT_TRUE(first->Append(Batch("b", 300)).ok());
  storage_->SetWriteHook(nullptr);
  // Servers stopped between writing their batch and committing it.
  storage_->SetObject("batches/stopped-1", "x");
  storage_->SetObject("batches/stopped-2", "yy");
  const auto batches = [this] {
    size_t count = 0;
    for (const auto& [path, bytes] : storage_->objects()) {
      count += absl::StartsWith(path, "batches/");
    }
    return count;
  };
  ASSERT_EQ(batches(), 4u);  // "a"'s, "b"'s and the two left
  const size_t first_batch = storage_->Read("batches/1")->size();
  // All within the grace: none.
  absl::StatusOr<SweptBatches> swept =
      SweepStagedBatches(*storage_, absl::Now() - absl::Hours(1), false);
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->objects, 0u);
  // Past it: all but the state's, counted by a dry run, then deleted.
  const absl::Time later = absl::Now() + absl::Seconds(1);
  swept = SweepStagedBatches(*storage_, later, /*dry_run=*/true);
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->objects, 3u);
  EXPECT_EQ(batches(), 4u);
  swept = SweepStagedBatches(*storage_, later, /*dry_run=*/false);
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ(swept->objects, 3u);
  EXPECT_EQ(swept->bytes, first_batch + 3);
  EXPECT_EQ(batches(), 1u);
  // The batch kept is the one the next server integrates the tiles from.
  std::unique_ptr<LogSequencer> second = NewSequencer();
  ASSERT_TRUE(second->Append(Batch("c", 1)).ok());
  EXPECT_EQ(AllEntries(311)[10], "b0");
  EXPECT_EQ(AllEntries(311)[310], "c0");
}

TEST_F(LogSequencerTest, AFailureBeforeTheCommitAppendsNothing) {
  std::unique_ptr<LogSequencer> sequencer = NewSequencer();
  ASSERT_TRUE(sequencer->Append(Batch("a", 3)).ok());
  FailWritesUnder("batches/");
  EXPECT_EQ(sequencer->Append(Batch("b", 3)).status().code(),
            absl::StatusCode::kUnavailable);
  storage_->SetWriteHook(nullptr);
  EXPECT_EQ((*sequencer->Current())->checkpoint.size, 3u);
}

TEST_F(LogSequencerTest, AStorageThatRollsBackIsCaught) {
  std::unique_ptr<LogSequencer> sequencer = NewSequencer();
  ASSERT_TRUE(sequencer->Append(Batch("a", 5)).ok());
  const std::optional<LogStorage::Record> old = storage_->state();
  ASSERT_TRUE(sequencer->Append(Batch("b", 5)).ok());
  storage_->SetState(old);
  absl::Status back = sequencer->Append(Batch("c", 1)).status();
  EXPECT_EQ(back.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(back.message(), "went back")) << back;
  EXPECT_EQ(sequencer->Current().status().code(), absl::StatusCode::kDataLoss);
  // Gone altogether: also caught.
  storage_->SetState(std::nullopt);
  EXPECT_EQ(sequencer->Current().status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(LogSequencerTest, AForkIsCaught) {
  // The storage holds another history of the same size, validly signed
  // (the log's key signed two: what a second writer with the key does).
  std::unique_ptr<LogSequencer> sequencer = NewSequencer();
  ASSERT_TRUE(sequencer->Append(Batch("a", 5)).ok());
  const std::optional<LogStorage::Record> before = storage_->state();
  ASSERT_TRUE(sequencer->Append(Batch("b", 5)).ok());
  storage_->SetState(before);
  ASSERT_TRUE(NewSequencer()->Append(Batch("x", 5)).ok());
  absl::Status fork = sequencer->Current().status();
  EXPECT_EQ(fork.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(fork.message(), "does not extend")) << fork;
}

TEST_F(LogSequencerTest, WhatTheStorageChangesIsCaught) {
  std::unique_ptr<LogSequencer> writer = NewSequencer();
  ASSERT_TRUE(writer->Append(Batch("a", 20)).ok());
  // The last batch's tiles gone and its staged entries changed: the batch
  // does not hash to the signed root.
  FailWritesUnder("tile/");
  ASSERT_TRUE(writer->Append(Batch("b", 4)).ok());
  storage_->SetWriteHook(nullptr);
  std::string batch_path;
  for (const auto& [path, bytes] : storage_->objects()) {
    if (absl::StartsWith(path, "batches/")) batch_path = path;
  }
  const std::string batch = *storage_->Read(batch_path);
  std::string changed = batch;
  changed.back() ^= 1;
  storage_->SetObject(batch_path, changed);
  absl::Status status = NewSequencer()->Current().status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  storage_->SetObject(batch_path, batch);
  ASSERT_TRUE(NewSequencer()->Current().ok());
  // A changed partial tile is written again from the batch.
  storage_->SetObject("tile/0/000.p/24", std::string(24 * 32, 'x'));
  absl::StatusOr<std::optional<SignedCheckpoint>> current =
      NewSequencer()->Current();
  ASSERT_TRUE(current.ok()) << current.status();
  ExpectProved(23, "b3", (*current)->checkpoint);
  // A checkpoint signed by another key is not the log's.
  auto other = std::make_shared<Ed25519PrivateKey>(
      *Ed25519PrivateKey::FromSeed(std::string(32, 'X')));
  std::unique_ptr<LogSequencer> impostor = NewSequencer(other);
  EXPECT_EQ(impostor->Append(Batch("c", 1)).status().code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace verity::tlog
