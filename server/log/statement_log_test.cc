// StatementLog on each store (a file store, S3 over FakeS3): statements
// appended from many threads share checkpoints, one per interval; every
// receipt is proved, by this server and by a replica on the same store;
// the queue is a budget; a stop answers what waits; only published objects
// are read; changed tiles are DATA_LOSS.

#include "server/log/statement_log.h"

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/store/forwarding_store.h"
#include "server/upkeep/testing/upkeep_stores.h"

namespace verity::server {
namespace {

constexpr char kOrigin[] = "verityd.example/log";

class StatementLogTest : public UpkeepTest {
 protected:
  void SetUp() override { Open(1); }

  std::unique_ptr<StatementLog> StartLog(
      absl::Duration interval = absl::Milliseconds(50),
      size_t max_pending = 1000,
      uint64_t tile_cache_bytes = StatementLogOptions().tile_cache_bytes) {
    StatementLogOptions options;
    options.tile_cache_bytes = tile_cache_bytes;
    options.origin = kOrigin;
    options.key = key_;
    options.checkpoint_interval = interval;
    options.max_pending = max_pending;
    absl::StatusOr<std::unique_ptr<StatementLog>> log =
        StatementLog::Start(store_, std::move(options));
    EXPECT_TRUE(log.ok()) << log.status();
    return *std::move(log);
  }

  // Appends `statement` and waits for its receipt.
  absl::StatusOr<LogReceipt> AppendAndWait(StatementLog& log,
                                           std::string statement) {
    absl::Notification done;
    absl::StatusOr<LogReceipt> receipt;
    absl::Status queued = log.Append(std::move(statement),
                                     [&](absl::StatusOr<LogReceipt> answer) {
                                       receipt = std::move(answer);
                                       done.Notify();
                                     });
    if (!queued.ok()) return queued;
    done.WaitForNotification();
    return receipt;
  }

  // `proof` proves `statement` as a client checks it.
  void ExpectProves(const StatementProof& proof, absl::string_view statement,
                    const tlog::NoteKey& key) {
    absl::StatusOr<tlog::SignedCheckpoint> opened =
        tlog::OpenCheckpoint(proof.checkpoint.note, key);
    ASSERT_TRUE(opened.ok()) << opened.status();
    const tlog::Checkpoint& checkpoint = opened->checkpoint;
    EXPECT_TRUE(tlog::VerifyInclusion(proof.index, checkpoint.size,
                                      tlog::LeafHash(statement),
                                      proof.inclusion, checkpoint.root)
                    .ok())
        << proof.index;
  }

  std::shared_ptr<const Ed25519PrivateKey> key_ =
      std::make_shared<Ed25519PrivateKey>(
          *Ed25519PrivateKey::FromSeed(std::string(32, 'L')));
};

TEST_P(StatementLogTest, BatchesStatementsAndProvesEach) {
  std::unique_ptr<StatementLog> log = StartLog();
  constexpr int kThreads = 4;
  constexpr int kEach = 30;
  std::vector<std::vector<absl::StatusOr<LogReceipt>>> receipts(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        receipts[t].push_back(
            AppendAndWait(*log, absl::StrCat("statement ", t, " ", i)));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::set<uint64_t> indexes;
  std::set<uint64_t> checkpoints;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEach; ++i) {
      ASSERT_TRUE(receipts[t][i].ok()) << receipts[t][i].status();
      const LogReceipt& receipt = *receipts[t][i];
      EXPECT_LT(receipt.index, receipt.checkpoint.checkpoint.size);
      indexes.insert(receipt.index);
      checkpoints.insert(receipt.checkpoint.checkpoint.size);
      absl::StatusOr<StatementProof> proof =
          log->Prove(receipt.index, absl::StrCat("statement ", t, " ", i), 0);
      ASSERT_TRUE(proof.ok()) << proof.status();
      ExpectProves(*proof, absl::StrCat("statement ", t, " ", i),
                   log->note_key());
      // Not another statement at that index.
      EXPECT_TRUE(
          absl::IsDataLoss(log->Prove(receipt.index, "forged", 0).status()));
    }
  }
  EXPECT_EQ(indexes.size(), size_t{kThreads * kEach});
  EXPECT_EQ(*indexes.rbegin(), uint64_t{kThreads * kEach - 1});
  // Statements that wait together share a checkpoint.
  EXPECT_LT(checkpoints.size(), size_t{kThreads * kEach});
  EXPECT_EQ(log->Latest()->checkpoint.size, uint64_t{kThreads * kEach});
}

TEST_P(StatementLogTest, StatementsQueuedTogetherShareACheckpoint) {
  std::unique_ptr<StatementLog> log = StartLog(absl::Seconds(1));
  constexpr int kStatements = 50;
  absl::Mutex mu;
  std::set<uint64_t> sizes;
  int answered = 0;
  for (int i = 0; i < kStatements; ++i) {
    ASSERT_TRUE(log->Append(absl::StrCat("queued ", i),
                            [&](absl::StatusOr<LogReceipt> receipt) {
                              absl::MutexLock lock(&mu);
                              EXPECT_TRUE(receipt.ok()) << receipt.status();
                              if (receipt.ok()) {
                                sizes.insert(
                                    receipt->checkpoint.checkpoint.size);
                              }
                              ++answered;
                            })
                    .ok());
  }
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](int* n) { return *n == kStatements; }, &answered));
  // The first checkpoint takes what was queued when the thread woke; the
  // rest waits a second for the next.
  EXPECT_LE(sizes.size(), 2u);
  EXPECT_EQ(*sizes.rbegin(), uint64_t{kStatements});
}

TEST_P(StatementLogTest, ProvesConsistencyFromWhatAReaderSaw) {
  std::unique_ptr<StatementLog> log = StartLog(absl::Milliseconds(1));
  absl::StatusOr<LogReceipt> first = AppendAndWait(*log, "first");
  ASSERT_TRUE(first.ok()) << first.status();
  const tlog::Checkpoint seen = first->checkpoint.checkpoint;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(AppendAndWait(*log, absl::StrCat("more ", i)).ok());
  }
  absl::StatusOr<StatementProof> proof = log->Prove(0, "first", seen.size);
  ASSERT_TRUE(proof.ok()) << proof.status();
  const tlog::Checkpoint& now = proof->checkpoint.checkpoint;
  EXPECT_EQ(now.size, 6u);
  EXPECT_EQ(proof->consistency_from, seen.size);
  EXPECT_TRUE(tlog::VerifyConsistency(seen.size, now.size, seen.root, now.root,
                                      proof->consistency)
                  .ok());
  // A reader at the newest size needs no consistency proof.
  proof = log->Prove(0, "first", now.size);
  ASSERT_TRUE(proof.ok());
  EXPECT_EQ(proof->consistency_from, 0u);
  EXPECT_TRUE(proof->consistency.empty());

  absl::StatusOr<ConsistencyAnswer> answer = log->Consistency(2, 0);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->new_size, 6u);
  EXPECT_FALSE(answer->proof.empty());
  absl::StatusOr<ConsistencyAnswer> from_nothing = log->Consistency(0, 0);
  ASSERT_TRUE(from_nothing.ok()) << from_nothing.status();
  EXPECT_TRUE(from_nothing->proof.empty());
  EXPECT_EQ(from_nothing->new_size, 6u);
  EXPECT_TRUE(absl::IsInvalidArgument(log->Consistency(4, 3).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(log->Consistency(1, 7).status()));
}

TEST_P(StatementLogTest, ProvesFromMemoryWhatTheNewestCheckpointCovers) {
  std::unique_ptr<StatementLog> log = StartLog(absl::Milliseconds(1));
  absl::StatusOr<LogReceipt> first = AppendAndWait(*log, "first");
  ASSERT_TRUE(first.ok()) << first.status();
  const uint64_t seen = first->checkpoint.checkpoint.size;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(AppendAndWait(*log, absl::StrCat("more ", i)).ok());
  }
  // The checkpoint a caller was answered with has its tiles cached: the
  // same proof as Prove(), from memory.
  std::optional<absl::StatusOr<StatementProof>> now =
      log->TryProveNow(0, "first", seen);
  ASSERT_TRUE(now.has_value());
  ASSERT_TRUE(now->ok()) << now->status();
  absl::StatusOr<StatementProof> proof = log->Prove(0, "first", seen);
  ASSERT_TRUE(proof.ok()) << proof.status();
  EXPECT_EQ((*now)->checkpoint.note, proof->checkpoint.note);
  EXPECT_EQ((*now)->inclusion, proof->inclusion);
  EXPECT_EQ((*now)->consistency_from, seen);
  EXPECT_EQ((*now)->consistency, proof->consistency);
  ExpectProves(**now, "first", log->note_key());
  // Not a proof: refused now, as Prove() refuses it.
  now = log->TryProveNow(0, "forged", 0);
  ASSERT_TRUE(now.has_value());
  EXPECT_TRUE(absl::IsDataLoss(now->status())) << now->status();
  // Past the newest checkpoint known here (a reader saw another replica's,
  // or the statement is not sequenced yet): not from memory.
  EXPECT_FALSE(log->TryProveNow(0, "first", 100).has_value());
  EXPECT_FALSE(log->TryProveNow(6, "later", 0).has_value());
}

// Counts the reads of the log's state.
class CountingStore final : public ForwardingStore {
 public:
  explicit CountingStore(std::shared_ptr<Store> inner)
      : ForwardingStore(*inner), inner_(std::move(inner)) {}
  absl::StatusOr<std::optional<SharedRecord>> ReadRecord(
      absl::string_view key) const override {
    ++state_reads;
    return ForwardingStore::ReadRecord(key);
  }
  mutable std::atomic<int> state_reads{0};

 private:
  const std::shared_ptr<Store> inner_;
};

TEST_P(StatementLogTest, AnIdleLogReadsTheStoreLessAndLessOften) {
  auto counting = std::make_shared<CountingStore>(store_);
  StatementLogOptions options;
  options.origin = kOrigin;
  options.key = key_;
  options.checkpoint_interval = absl::Milliseconds(20);
  absl::StatusOr<std::unique_ptr<StatementLog>> log =
      StatementLog::Start(counting, std::move(options));
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_TRUE(AppendAndWait(**log, "one").ok());
  const int before = counting->state_reads.load();
  // 1.5 s idle: once per interval would be 75 refreshes; backing off from
  // 20 ms, doubling, about 6.
  absl::SleepFor(absl::Milliseconds(1500));
  const int refreshes = counting->state_reads.load() - before;
  EXPECT_LE(refreshes, 12);
  EXPECT_GE(refreshes, 1);
  // An append still goes through at once, and the log learns another
  // replica's checkpoint when a reader asks past its own.
  ASSERT_TRUE(AppendAndWait(**log, "two").ok());
  std::unique_ptr<StatementLog> other = StartLog(absl::Milliseconds(20));
  absl::StatusOr<LogReceipt> three = AppendAndWait(*other, "three");
  ASSERT_TRUE(three.ok()) << three.status();
  absl::StatusOr<StatementProof> proof =
      (*log)->Prove(three->index, "three", 0);
  ASSERT_TRUE(proof.ok()) << proof.status();
  ExpectProves(*proof, "three", (*log)->note_key());
}

TEST_P(StatementLogTest, AReplicaOnTheSameStoreProvesAndExtendsTheLog) {
  std::unique_ptr<StatementLog> one = StartLog(absl::Milliseconds(1));
  std::unique_ptr<StatementLog> two = StartLog(absl::Milliseconds(1));
  absl::StatusOr<LogReceipt> a = AppendAndWait(*one, "from one");
  ASSERT_TRUE(a.ok()) << a.status();
  // The replica learns the checkpoint from the store to prove it.
  absl::StatusOr<StatementProof> proof = two->Prove(a->index, "from one", 0);
  ASSERT_TRUE(proof.ok()) << proof.status();
  ExpectProves(*proof, "from one", two->note_key());
  absl::StatusOr<LogReceipt> b = AppendAndWait(*two, "from two");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->index, a->index + 1);
  proof = one->Prove(b->index, "from two", a->checkpoint.checkpoint.size);
  ASSERT_TRUE(proof.ok()) << proof.status();
  ExpectProves(*proof, "from two", one->note_key());
}

TEST_P(StatementLogTest, TheQueueIsABudgetAndAStopAnswersIt) {
  // A long interval: after the first checkpoint, statements wait.
  std::unique_ptr<StatementLog> log = StartLog(absl::Hours(1), 2);
  ASSERT_TRUE(AppendAndWait(*log, "first").ok());
  std::atomic<int> unavailable{0};
  const auto count = [&](absl::StatusOr<LogReceipt> receipt) {
    if (absl::IsUnavailable(receipt.status())) ++unavailable;
  };
  ASSERT_TRUE(log->Append("waits 1", count).ok());
  ASSERT_TRUE(log->Append("waits 2", count).ok());
  bool ran = false;
  const absl::Status refused = log->Append(
      "one too many", [&](absl::StatusOr<LogReceipt>) { ran = true; });
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_TRUE(absl::IsInvalidArgument(log->Append("", count)));
  log->Stop();
  EXPECT_EQ(unavailable.load(), 2);
  EXPECT_FALSE(ran);
  EXPECT_TRUE(absl::IsUnavailable(log->Append("late", count)));
}

TEST_P(StatementLogTest, ReadsOnlyPublishedObjects) {
  std::unique_ptr<StatementLog> log = StartLog(absl::Milliseconds(1));
  absl::StatusOr<LogReceipt> receipt = AppendAndWait(*log, "statement");
  ASSERT_TRUE(receipt.ok());
  EXPECT_EQ(log->ReadObject("checkpoint").value_or(""),
            receipt->checkpoint.note);
  EXPECT_TRUE(log->ReadObject("tile/0/000.p/1").ok());
  EXPECT_TRUE(log->ReadObject("tile/entries/000.p/1").ok());
  EXPECT_TRUE(absl::IsNotFound(log->ReadObject("tile/0/001").status()));
  for (const char* path : {"batches/x", "tile/../batches/x", "log-state", "",
                           "tile//0", "/checkpoint"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(log->ReadObject(path).status()))
        << path;
  }
}

TEST_P(StatementLogTest, ChangedTilesAreDataLoss) {
  // No tile cache: a tile the log has read is not read again.
  std::unique_ptr<StatementLog> log =
      StartLog(absl::Milliseconds(1), 1000, /*tile_cache_bytes=*/0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(AppendAndWait(*log, absl::StrCat("s", i)).ok());
  }
  std::string tile = *store_->ReadLogObject("tile/0/000.p/3");
  tile[0] ^= 1;
  ASSERT_TRUE(store_->WriteLogObject("tile/0/000.p/3", tile).ok());
  EXPECT_TRUE(absl::IsDataLoss(log->Prove(2, "s2", 0).status()));
  EXPECT_TRUE(absl::IsDataLoss(log->Consistency(1, 3).status()));
}

INSTANTIATE_TEST_SUITE_P(Stores, StatementLogTest,
                         ::testing::Values(StoreFactory(NewTestFileStore),
                                           StoreFactory(NewTestS3Store)));

}  // namespace
}  // namespace verity::server
