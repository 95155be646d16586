// The dispatcher against a real store and pool: each class, size, tree-cache
// state and budget state lands on the path the policy names; a request that
// meets an uncached tree block finishes on the pool without rehashing.

#include "server/dispatch/dispatcher.h"

#include <prometheus/registry.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/base/buffer_pool.h"
#include "lib/base/executor.h"
#include "server/dispatch/inline_tuner.h"
#include "server/dispatch/read_job.h"
#include "server/dispatch/verify_pool.h"
#include "server/store/fec_repair.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/testing/remote_blob.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

constexpr uint64_t kBlocks = 201;  // and 5 bytes: the last block is partial

struct Outcome {
  absl::Status status;
  bool on_caller_thread = false;
  // The name of the thread that completed a ReadLater().
  std::string finished_on;
  std::string data;
};

std::string ThreadName() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

// A blob as a caching store serves it: while it holds a copy of the data,
// reads are local and come from the copy, which may be bad; Forget() drops
// the copy, and reads then come from `source` (remote). Records prefetches.
class CachedCopyBlob final : public Blob {
 public:
  CachedCopyBlob(std::shared_ptr<const Blob> local, bool copy_is_bad)
      : Blob(*local),
        local_(local),
        remote_(std::make_shared<RemoteBlob>(local)),
        copy_is_bad_(copy_is_bad) {}

  std::optional<absl::Status> TryReadNow(
      BlobPart part, uint64_t offset, absl::Span<uint8_t> out) const override {
    if (!has_copy_.load()) return std::nullopt;
    std::optional<absl::Status> status = local_->TryReadNow(part, offset, out);
    if (status.has_value() && status->ok() && copy_is_bad_ &&
        part == BlobPart::kData && !out.empty()) {
      out[0] ^= 1;
    }
    return status;
  }
  void ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                 ReadDone done) const override {
    if (!has_copy_.load()) {
      remote_->ReadAsync(part, offset, std::move(into), std::move(done));
      return;
    }
    local_->ReadAsync(
        part, offset, std::move(into),
        [bad = copy_is_bad_ && part == BlobPart::kData,
         done = std::move(done)](absl::StatusOr<Buffer> bytes) mutable {
          if (bytes.ok() && bad && !bytes->empty()) {
            bytes->data()[0] ^= 1;
          }
          std::move(done)(std::move(bytes));
        });
  }
  void Prefetch(BlobPart part, uint64_t offset,
                uint64_t length) const override {
    absl::MutexLock lock(&mu_);
    prefetched_.push_back({part, offset, length});
  }
  bool Forget(BlobPart, uint64_t, uint64_t) const override {
    return has_copy_.exchange(false);
  }

  int remote_reads() const { return remote_->reads(BlobPart::kData); }
  struct Range {
    BlobPart part;
    uint64_t offset;
    uint64_t length;
  };
  std::vector<Range> prefetched() const {
    absl::MutexLock lock(&mu_);
    return prefetched_;
  }

 private:
  const std::shared_ptr<const Blob> local_;
  const std::shared_ptr<RemoteBlob> remote_;
  const bool copy_is_bad_;
  mutable std::atomic<bool> has_copy_{true};
  mutable absl::Mutex mu_;
  mutable std::vector<Range> prefetched_ ABSL_GUARDED_BY(mu_);
};

class DispatcherTest : public FileStoreFixture {
 protected:
  void SetUp() override {
    FileStoreFixture::SetUp();
    data_ = MakeData(kBlocks * 4096 + 5, 7);
    digest_ = MustPut(data_);
    absl::StatusOr<std::unique_ptr<VerifyPool>> pool =
        VerifyPool::Create(VerifyPoolOptions());
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
  }

  // The stored blob, as the file store opens it.
  std::shared_ptr<const Blob> Stored() {
    auto blob = store_->OpenBlob(DigestFromText(digest_));
    EXPECT_TRUE(blob.ok()) << blob.status();
    return *std::move(blob);
  }

  std::shared_ptr<VerifiedBlob> ColdBlob() {
    return *VerifiedBlob::Create(Stored());
  }

  // The blob as a network store would serve it: no read is local.
  std::shared_ptr<VerifiedBlob> RemoteColdBlob() {
    return *VerifiedBlob::Create(std::make_shared<RemoteBlob>(Stored()));
  }

  std::shared_ptr<CachedCopyBlob> CachedCopy(bool copy_is_bad) {
    return std::make_shared<CachedCopyBlob>(Stored(), copy_is_bad);
  }

  // Every tree block cached (reading one data block under each level-0 one).
  std::shared_ptr<VerifiedBlob> WarmBlob() {
    std::shared_ptr<VerifiedBlob> blob = ColdBlob();
    std::string out;
    for (uint64_t block : {0, 128}) {
      EXPECT_TRUE(ReadVerified(*blob, block, block + 1, &out).ok());
    }
    EXPECT_TRUE(blob->TreeIsVerifiedFor(0, kBlocks + 1));
    return blob;
  }

  std::unique_ptr<Dispatcher> MakeDispatcher(DispatchMode mode,
                                             bool budget_left) {
    DispatchOptions options;
    options.mode = mode;
    options.limits = InlineLimits::Uniform(8192);
    options.budget.budget = budget_left ? absl::Hours(1) : absl::ZeroDuration();
    return std::make_unique<Dispatcher>(options, pool_, metrics_);
  }

  Outcome Run(Dispatcher& dispatcher, std::shared_ptr<VerifiedBlob> blob,
              PriorityClass c, uint64_t first, uint64_t end,
              bool cancelled = false, uint64_t chunk_blocks = 0) {
    // One chunk: the whole range, unless `chunk_blocks` says how many.
    auto job = std::make_shared<ReadJob>(std::move(blob),
                                         BlockRange{first, end}, c, buffers_);
    if (cancelled) job->Cancel();
    job->StartChunk(chunk_blocks != 0 ? chunk_blocks : end - first);
    Outcome outcome;
    if (std::optional<absl::Status> now = dispatcher.TryReadNow(*job)) {
      outcome.status = *now;
      outcome.on_caller_thread = true;
    } else {
      absl::Notification done;
      const std::thread::id caller = std::this_thread::get_id();
      bool inside = false;
      dispatcher.ReadLater(job, [&](absl::Status status) {
        outcome.status = status;
        outcome.finished_on = ThreadName();
        inside = std::this_thread::get_id() == caller;
        done.Notify();
      });
      done.WaitForNotification();
      EXPECT_FALSE(inside) << "ReadLater() completed inside the call";
    }
    outcome.data = StringOf(job->TakeChunk());
    return outcome;
  }

  std::string Expected(uint64_t first, uint64_t end) const {
    return data_.substr(first * 4096, (end - first) * 4096);
  }

  uint64_t Placed(DispatchPath path, PriorityClass c,
                  DispatchReason reason) const {
    return metrics_->placements(path, c, reason);
  }

  std::string data_;
  std::string digest_;
  prometheus::Registry registry_;
  std::shared_ptr<DispatchMetrics> metrics_ =
      std::make_shared<DispatchMetrics>(registry_);
  std::shared_ptr<VerifyPool> pool_;
  std::shared_ptr<BufferPool> buffers_ = BufferPool::Create({});
};

TEST_F(DispatcherTest, EveryClassSizeCacheAndBudgetState) {
  for (PriorityClass c : kAllPriorityClasses) {
    for (uint64_t blocks : {1, 2, 3, 128}) {
      for (bool warm : {false, true}) {
        for (bool budget : {false, true}) {
          SCOPED_TRACE(testing::Message()
                       << PriorityClassName(c) << " blocks=" << blocks
                       << " warm=" << warm << " budget=" << budget);
          std::shared_ptr<VerifiedBlob> blob = warm ? WarmBlob() : ColdBlob();
          std::unique_ptr<Dispatcher> dispatcher =
              MakeDispatcher(DispatchMode::kAdaptive, budget);
          const bool small = c != PriorityClass::kIdle && blocks * 4096 <= 8192;
          const DispatchReason reason = !small    ? DispatchReason::kSize
                                        : !budget ? DispatchReason::kBudget
                                        : !warm   ? DispatchReason::kCacheMiss
                                                : DispatchReason::kWithinLimit;
          const uint64_t inline_before =
              Placed(DispatchPath::kInline, c, DispatchReason::kWithinLimit);
          const uint64_t pool_before = Placed(DispatchPath::kPool, c, reason);
          Outcome outcome = Run(*dispatcher, blob, c, 10, 10 + blocks);
          ASSERT_TRUE(outcome.status.ok()) << outcome.status;
          EXPECT_TRUE(outcome.data == Expected(10, 10 + blocks));
          const bool went_inline = small && budget;
          EXPECT_EQ(
              Placed(DispatchPath::kInline, c, DispatchReason::kWithinLimit),
              inline_before + (went_inline ? 1 : 0));
          if (reason == DispatchReason::kWithinLimit) {
            EXPECT_TRUE(outcome.on_caller_thread);
          } else {
            EXPECT_EQ(Placed(DispatchPath::kPool, c, reason), pool_before + 1);
            EXPECT_FALSE(outcome.on_caller_thread);
          }
        }
      }
    }
  }
}

TEST_F(DispatcherTest, FallbackContinuesOnThePoolWithoutRehashing) {
  std::shared_ptr<VerifiedBlob> blob = ColdBlob();
  std::string out;
  // Caches the level-0 tree block for data blocks [0, 128).
  ASSERT_TRUE(ReadVerified(*blob, 0, 1, &out).ok());
  ASSERT_EQ(blob->data_blocks_hashed(), 1);
  DispatchOptions options;
  options.limits = InlineLimits::Uniform(1 << 20);
  Dispatcher dispatcher(options, pool_, metrics_);
  Outcome outcome = Run(dispatcher, blob, PriorityClass::kRt, 100, 140);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_TRUE(outcome.data == Expected(100, 140));
  EXPECT_FALSE(outcome.on_caller_thread);
  // 28 blocks inline, 12 on the pool: each hashed once.
  EXPECT_EQ(blob->data_blocks_hashed(), 1 + 40);
  EXPECT_EQ(Placed(DispatchPath::kInline, PriorityClass::kRt,
                   DispatchReason::kWithinLimit),
            1);
  EXPECT_EQ(Placed(DispatchPath::kPool, PriorityClass::kRt,
                   DispatchReason::kCacheMiss),
            1);
}

// With a tuner the tuner's limits decide, not the options' own.
TEST_F(DispatcherTest, ATunersLimitsDecide) {
  InlineTunerOptions tuning;
  tuning.prior = InlineLimits::Uniform(65536);
  auto tuner =
      std::make_shared<InlineTuner>(tuning, [](const InlineLimitChange&) {});
  DispatchOptions options;
  options.limits = InlineLimits::Uniform(4096);
  options.tuner = tuner;
  options.budget.budget = absl::Hours(1);
  Dispatcher dispatcher(options, pool_, metrics_);
  Outcome outcome = Run(dispatcher, WarmBlob(), PriorityClass::kRt, 10, 14);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_TRUE(outcome.data == Expected(10, 14));
  EXPECT_TRUE(outcome.on_caller_thread) << "16 KiB is within the tuner's limit";
  EXPECT_EQ(Placed(DispatchPath::kInline, PriorityClass::kRt,
                   DispatchReason::kWithinLimit),
            1);
}

TEST_F(DispatcherTest, ForcedModes) {
  DispatchOptions options;
  options.mode = DispatchMode::kInline;
  Dispatcher inline_only(options, pool_, metrics_);
  std::shared_ptr<VerifiedBlob> cold = ColdBlob();
  Outcome outcome =
      Run(inline_only, cold, PriorityClass::kIdle, 0, kBlocks + 1);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_TRUE(outcome.on_caller_thread);
  EXPECT_TRUE(outcome.data == data_);
  EXPECT_EQ(Placed(DispatchPath::kInline, PriorityClass::kIdle,
                   DispatchReason::kForced),
            1);

  std::unique_ptr<Dispatcher> pool_only =
      MakeDispatcher(DispatchMode::kPool, true);
  std::shared_ptr<VerifiedBlob> warm = WarmBlob();
  outcome = Run(*pool_only, warm, PriorityClass::kRt, 5, 6);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_FALSE(outcome.on_caller_thread);
  EXPECT_EQ(
      Placed(DispatchPath::kPool, PriorityClass::kRt, DispatchReason::kForced),
      1);
  EXPECT_EQ(metrics_->queue_wait_count(PriorityClass::kRt), 1);
}

TEST_F(DispatcherTest, CancelledWorkIsSkipped) {
  std::unique_ptr<Dispatcher> dispatcher =
      MakeDispatcher(DispatchMode::kPool, true);
  std::shared_ptr<VerifiedBlob> blob = ColdBlob();
  Outcome outcome = Run(*dispatcher, blob, PriorityClass::kBe, 0, 64,
                        /*cancelled=*/true);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(blob->data_blocks_hashed(), 0);
}

TEST_F(DispatcherTest, CorruptionIsReportedFromEitherPath) {
  const std::string path = BlobDirFor(root_, digest_) + "/data";
  std::string bytes = *ReadWholeFile(path);
  bytes[3 * 4096] ^= 0x40;
  ASSERT_TRUE(WriteWholeFile(path, bytes).ok());
  for (bool warm : {true, false}) {
    std::shared_ptr<VerifiedBlob> blob = warm ? WarmBlob() : ColdBlob();
    std::unique_ptr<Dispatcher> dispatcher =
        MakeDispatcher(DispatchMode::kAdaptive, true);
    Outcome outcome = Run(*dispatcher, blob, PriorityClass::kRt, 3, 4);
    EXPECT_EQ(outcome.status.code(), absl::StatusCode::kDataLoss)
        << outcome.status;
    EXPECT_EQ(outcome.on_caller_thread, warm);
    EXPECT_TRUE(outcome.data.empty());
  }
}

TEST_F(DispatcherTest, RemoteChunksAreFetchedThenVerifiedOnThePool) {
  for (DispatchMode mode : {DispatchMode::kAdaptive, DispatchMode::kPool}) {
    std::shared_ptr<VerifiedBlob> blob = RemoteColdBlob();
    std::unique_ptr<Dispatcher> dispatcher = MakeDispatcher(mode, true);
    // Small, urgent and with budget: inline, were its bytes local.
    for (int round = 0; round < 2; ++round) {  // cold tree, then warm
      Outcome outcome = Run(*dispatcher, blob, PriorityClass::kRt, 10, 11);
      ASSERT_TRUE(outcome.status.ok()) << outcome.status;
      EXPECT_TRUE(outcome.data == Expected(10, 11));
      EXPECT_FALSE(outcome.on_caller_thread);
    }
  }
  EXPECT_EQ(Placed(DispatchPath::kPool, PriorityClass::kRt,
                   DispatchReason::kCacheMiss),
            2);
  EXPECT_EQ(Placed(DispatchPath::kInline, PriorityClass::kRt,
                   DispatchReason::kWithinLimit),
            0);
}

TEST_F(DispatcherTest, ForcedInlineVerifiesRemoteChunksOnThePool) {
  DispatchOptions options;
  options.mode = DispatchMode::kInline;
  Dispatcher inline_only(options, pool_, metrics_);
  Outcome outcome =
      Run(inline_only, RemoteColdBlob(), PriorityClass::kBe, 0, kBlocks + 1);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_TRUE(outcome.data == data_);
  // Not where the last read completed, a thread of the store's: its
  // transfers would wait for the hashing.
  EXPECT_FALSE(outcome.on_caller_thread);
  EXPECT_EQ(outcome.finished_on.rfind("verify", 0), 0u) << outcome.finished_on;
}

TEST_F(DispatcherTest, RemoteCorruptionIsReported) {
  const std::string path = BlobDirFor(root_, digest_) + "/data";
  std::string bytes = *ReadWholeFile(path);
  bytes[3 * 4096] ^= 0x40;
  ASSERT_TRUE(WriteWholeFile(path, bytes).ok());
  std::unique_ptr<Dispatcher> dispatcher =
      MakeDispatcher(DispatchMode::kAdaptive, true);
  Outcome outcome =
      Run(*dispatcher, RemoteColdBlob(), PriorityClass::kRt, 0, 8);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kDataLoss)
      << outcome.status;
  EXPECT_TRUE(outcome.data.empty());
}

TEST_F(DispatcherTest, ABadCachedCopyIsReadAgainFromTheStore) {
  for (PriorityClass c : {PriorityClass::kRt, PriorityClass::kBe}) {
    std::shared_ptr<CachedCopyBlob> copy = CachedCopy(/*copy_is_bad=*/true);
    std::unique_ptr<Dispatcher> dispatcher =
        MakeDispatcher(DispatchMode::kAdaptive, true);
    const uint64_t end = c == PriorityClass::kRt ? 1 : kBlocks + 1;
    Outcome outcome = Run(*dispatcher, *VerifiedBlob::Create(copy), c, 0, end);
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    EXPECT_TRUE(outcome.data ==
                Expected(0, end).substr(0, outcome.data.size()));
    EXPECT_EQ(outcome.data.size(),
              std::min<uint64_t>(end * 4096, data_.size()));
    EXPECT_EQ(copy->remote_reads(), 1);
  }
}

TEST_F(DispatcherTest, ABadBlobIsDataLossAfterOneMoreRead) {
  // The store's own copy is bad: the second read fails as the first did.
  const std::string path = BlobDirFor(root_, digest_) + "/data";
  std::string bytes = *ReadWholeFile(path);
  bytes[0] ^= 0x40;
  ASSERT_TRUE(WriteWholeFile(path, bytes).ok());
  std::shared_ptr<CachedCopyBlob> copy = CachedCopy(/*copy_is_bad=*/false);
  std::unique_ptr<Dispatcher> dispatcher =
      MakeDispatcher(DispatchMode::kAdaptive, true);
  Outcome outcome =
      Run(*dispatcher, *VerifiedBlob::Create(copy), PriorityClass::kRt, 0, 1);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kDataLoss)
      << outcome.status;
  EXPECT_TRUE(outcome.data.empty());
  EXPECT_EQ(copy->remote_reads(), 1);
}

TEST_F(DispatcherTest, ReadsAheadOfTheChunk) {
  DispatchOptions options;
  options.read_ahead_bytes = 10 * 4096 - 100;  // rounds up to 10 blocks
  Dispatcher dispatcher(options, pool_, metrics_);
  std::shared_ptr<CachedCopyBlob> copy = CachedCopy(/*copy_is_bad=*/false);
  std::shared_ptr<VerifiedBlob> blob = *VerifiedBlob::Create(copy);
  Outcome outcome = Run(dispatcher, blob, PriorityClass::kBe, 0, 4);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  auto data_prefetches = [&] {
    std::vector<CachedCopyBlob::Range> data;
    for (const auto& range : copy->prefetched()) {
      if (range.part == BlobPart::kData) data.push_back(range);
    }
    return data;
  };
  // The job is blocks [0, 4): nothing after it is read ahead.
  EXPECT_TRUE(data_prefetches().empty());
  Run(dispatcher, blob, PriorityClass::kBe, 0, kBlocks + 1, false, 4);
  const std::vector<CachedCopyBlob::Range> data = data_prefetches();
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].offset, 4u * 4096);
  EXPECT_EQ(data[0].length, 10u * 4096);
}

// With an FEC area (2 roots; the blob's 205 blocks are one RS group) and a
// repair executor, a bad block is repaired and the read succeeds, whichever
// path and mode it starts on; more bad blocks than roots fail as without.
class DispatcherFecTest : public DispatcherTest {
 protected:
  void SetUp() override {
    fec_roots_ = 2;
    DispatcherTest::SetUp();
  }

  std::unique_ptr<Dispatcher> MakeRepairingDispatcher(DispatchMode mode) {
    DispatchOptions options;
    options.mode = mode;
    options.limits = InlineLimits::Uniform(8192);
    options.budget.budget = absl::Hours(1);
    options.repairs = repairs_;
    return std::make_unique<Dispatcher>(options, pool_, metrics_);
  }

  void Flip(uint64_t offset) {
    const std::string path = BlobDirFor(root_, digest_) + "/data";
    std::string bytes = *ReadWholeFile(path);
    bytes[offset] ^= 0x40;
    ASSERT_TRUE(WriteWholeFile(path, bytes).ok());
  }

  static RepairCoordinatorOptions RepairOptions(LogCapture& log) {
    RepairCoordinatorOptions options;
    options.threads = 1;
    options.log = log.Sink();
    return options;
  }

  std::shared_ptr<RepairCoordinator> repairs_ =
      std::make_shared<RepairCoordinator>(RepairOptions(log_), metrics_);
};

TEST_F(DispatcherFecTest, ABadBlockIsRepairedOnEitherPathAndMode) {
  uint64_t repaired = 0;
  for (DispatchMode mode :
       {DispatchMode::kAdaptive, DispatchMode::kPool, DispatchMode::kInline}) {
    for (bool warm : {true, false}) {
      SCOPED_TRACE(absl::StrCat(DispatchModeName(mode), warm ? " warm" : ""));
      Flip(3 * 4096 + 9);
      std::unique_ptr<Dispatcher> dispatcher = MakeRepairingDispatcher(mode);
      Outcome outcome = Run(*dispatcher, warm ? WarmBlob() : ColdBlob(),
                            PriorityClass::kRt, 3, 4);
      EXPECT_TRUE(outcome.status.ok()) << outcome.status;
      EXPECT_FALSE(outcome.on_caller_thread);
      EXPECT_TRUE(outcome.data == Expected(3, 4));
      EXPECT_EQ(metrics_->fec_repaired_blocks(), ++repaired);
      EXPECT_TRUE(*ReadWholeFile(BlobDirFor(root_, digest_) + "/data") ==
                  data_);
    }
  }
  EXPECT_EQ(metrics_->fec_repair_failures(), 0u);
  EXPECT_TRUE(log_.Contains("FEC repaired 1 block(s)"));
}

TEST_F(DispatcherFecTest, MoreBadBlocksThanRootsIsDataLoss) {
  for (uint64_t block : {3, 50, 100}) Flip(block * 4096);
  std::unique_ptr<Dispatcher> dispatcher =
      MakeRepairingDispatcher(DispatchMode::kAdaptive);
  Outcome outcome = Run(*dispatcher, ColdBlob(), PriorityClass::kBe, 0, 10);
  EXPECT_EQ(outcome.status.code(), absl::StatusCode::kDataLoss)
      << outcome.status;
  EXPECT_TRUE(outcome.data.empty());
  EXPECT_EQ(metrics_->fec_repair_failures(), 1u);
  EXPECT_EQ(metrics_->fec_repaired_blocks(), 0u);
  EXPECT_TRUE(log_.Contains("FEC repair failed"));
}

// A dispatcher destroyed while a read it took waits for a repair waits for
// that read: the repair's answer reaches a dispatcher and a pool that still
// exist, and the read is done before the destructor returns.
TEST_F(DispatcherFecTest, DestroyingTheDispatcherWaitsForItsReadsInARepair) {
  Flip(3 * 4096 + 9);
  absl::Notification repairing, release;
  auto repairs = std::make_shared<RepairCoordinator>(
      RepairOptions(log_), metrics_,
      [&](VerifiedBlob& blob, uint64_t bad) -> RepairCoordinator::Result {
        repairing.Notify();
        release.WaitForNotification();
        return RepairFecGroup(blob, bad);
      });
  DispatchOptions options;
  options.mode = DispatchMode::kPool;
  options.repairs = repairs;
  auto dispatcher = std::make_unique<Dispatcher>(options, pool_, metrics_);
  auto job = std::make_shared<ReadJob>(ColdBlob(), BlockRange{3, 4},
                                       PriorityClass::kBe, buffers_);
  job->StartChunk(1);
  ASSERT_FALSE(dispatcher->TryReadNow(*job).has_value());
  std::atomic<bool> read_done{false};
  absl::Status status = absl::UnknownError("not done");
  dispatcher->ReadLater(job, [&](absl::Status done) {
    status = std::move(done);
    read_done.store(true);
  });
  repairing.WaitForNotification();
  std::atomic<bool> destroyed{false};
  std::thread destroyer([&] {
    dispatcher.reset();
    destroyed.store(true);
  });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(destroyed.load());  // the read waits in the repair
  release.Notify();
  destroyer.join();
  EXPECT_TRUE(read_done.load());
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_TRUE(StringOf(job->TakeChunk()) == Expected(3, 4));
}

}  // namespace
}  // namespace verity::server
