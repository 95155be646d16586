// ReadStream without gRPC, driven through scripted completion orders: chunk
// reads that complete at once or later, writes that complete inside
// StartWrite() or later, in random interleavings; the client cancelling
// mid-chunk; a write or a read failing while the other is in flight; and,
// with the real Dispatcher, a remote blob behind a slab cache so small that
// slabs are evicted between a chunk's steps, and a bad cached copy that is
// fetched again. Every stream must send exactly the blob's bytes, finish
// exactly once, and finish only when nothing it started is in flight.

#include "server/rpc/read_stream.h"

#include <prometheus/registry.h>

#include <deque>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/base/buffer_pool.h"
#include "server/dispatch/dispatch_metrics.h"
#include "server/dispatch/dispatcher.h"
#include "server/dispatch/verify_pool.h"
#include "server/store/cache/caching_blob.h"
#include "server/store/cache/slab_cache.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/testing/remote_blob.h"

namespace verity::server {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kBlocks = 300;  // and 77 bytes: the last block is partial

// Records what the stream writes and how it ends. Writes complete inside
// StartWrite() (`write_at_once`) or when the test says. Thread-safe.
class FakeOutput final : public ReadStreamOutput {
 public:
  explicit FakeOutput(bool write_at_once) : write_at_once_(write_at_once) {}

  void set_stream(std::shared_ptr<ReadStream> stream) { stream_ = stream; }

  void StartWrite(ReadMessage message) override {
    {
      absl::MutexLock lock(&mu_);
      EXPECT_FALSE(writing_) << "two writes in flight";
      EXPECT_FALSE(finished_) << "a write after Finish()";
      writing_ = true;
      messages_.push_back(std::move(message));
    }
    if (write_at_once_) CompleteWrite(absl::OkStatus());
  }
  void ChunkRead(uint64_t bytes) override {
    absl::MutexLock lock(&mu_);
    chunk_bytes_ += bytes;
  }
  void Finish(absl::Status status) override {
    absl::MutexLock lock(&mu_);
    EXPECT_FALSE(writing_) << "Finish() with a write in flight";
    EXPECT_FALSE(finished_) << "Finish() twice";
    finished_ = true;
    status_ = status;
  }

  // Completes the write in flight, if any; true if there was one.
  bool CompleteWrite(absl::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (!writing_) return false;
      writing_ = false;
    }
    stream_.lock()->OnWriteDone(std::move(status));
    return true;
  }

  bool finished() const {
    absl::MutexLock lock(&mu_);
    return finished_;
  }
  // Waits (up to a minute) for Finish().
  absl::Status WaitForFinish() const {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&finished_), absl::Minutes(1));
    EXPECT_TRUE(finished_);
    return status_;
  }
  // The data of the messages, in order, checking that they are contiguous
  // from `offset` and that only the first carries `first`.
  std::string Data(uint64_t offset) const {
    absl::MutexLock lock(&mu_);
    std::string data;
    for (size_t i = 0; i < messages_.size(); ++i) {
      EXPECT_EQ(messages_[i].first, i == 0);
      if (messages_[i].data.empty()) continue;
      EXPECT_EQ(messages_[i].data_offset, offset + data.size());
      data += StringOf(messages_[i].data);
    }
    return data;
  }
  size_t tree_blocks() const {
    absl::MutexLock lock(&mu_);
    size_t n = 0;
    for (const ReadMessage& message : messages_)
      n += message.tree_blocks.size();
    return n;
  }
  size_t messages() const {
    absl::MutexLock lock(&mu_);
    return messages_.size();
  }

 private:
  const bool write_at_once_;
  std::weak_ptr<ReadStream> stream_;
  mutable absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::vector<ReadMessage> messages_ ABSL_GUARDED_BY(mu_);
  uint64_t chunk_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

// Reads chunks from a local blob without verifying them, answering each at
// once or later (when the test completes it, from its own thread), as a
// script of choices says. Thread-safe.
class ScriptedReader final : public ChunkReader {
 public:
  // `now(i)`: whether chunk read i completes at once.
  explicit ScriptedReader(std::function<bool(int)> now)
      : now_(std::move(now)) {}

  void Begin(const ReadJob&) override {}
  std::optional<absl::Status> TryReadNow(ReadJob& job) override {
    absl::MutexLock lock(&mu_);
    EXPECT_FALSE(pending_.has_value()) << "two reads in flight";
    if (!now_(reads_++)) return std::nullopt;
    return Load(job);
  }
  void ReadLater(std::shared_ptr<ReadJob> job, Done done) override {
    absl::MutexLock lock(&mu_);
    pending_.emplace(Pending{std::move(job), std::move(done)});
  }
  absl::StatusOr<std::string> TreeBlock(const VerifiedBlob& blob,
                                        TreeBlockId id) const override {
    return std::string(blob.geometry().block_size(),
                       static_cast<char>(id.index));
  }

  // Completes the read in flight with its data, or with `status` if not OK;
  // true if there was one.
  bool CompleteRead(absl::Status status = absl::OkStatus()) {
    std::optional<Pending> pending;
    {
      absl::MutexLock lock(&mu_);
      pending.swap(pending_);
    }
    if (!pending.has_value()) return false;
    if (status.ok()) status = Load(*pending->job);
    std::move(pending->done)(status);
    return true;
  }
  bool reading() const {
    absl::MutexLock lock(&mu_);
    return pending_.has_value();
  }

 private:
  struct Pending {
    std::shared_ptr<ReadJob> job;
    Done done;
  };
  static absl::Status Load(ReadJob& job) {
    std::optional<absl::Status> loaded = job.chunk()->TryLoadNow();
    EXPECT_TRUE(loaded.has_value());
    return loaded.value_or(absl::InternalError("not here"));
  }

  const std::function<bool(int)> now_;
  mutable absl::Mutex mu_;
  int reads_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<Pending> pending_ ABSL_GUARDED_BY(mu_);
};

class ReadStreamTest : public FileStoreFixture {
 protected:
  void SetUp() override {
    FileStoreFixture::SetUp();
    data_ = MakeData(kBlocks * kBlock + 77, 3);
    digest_ = MustPut(data_);
  }

  std::shared_ptr<const Blob> Stored() {
    auto blob = store_->OpenBlob(DigestFromText(digest_));
    EXPECT_TRUE(blob.ok()) << blob.status();
    return *blob;
  }

  // A stream over `reader` and `output` for bytes [offset, offset + length)
  // of `blob`, in chunks of 8 blocks growing to 32.
  std::shared_ptr<ReadStream> Stream(ChunkReader* reader, FakeOutput* output) {
    ReadStreamOptions options;
    options.chunk_bytes = 8 * kBlock;
    options.max_chunk_bytes = 32 * kBlock;
    options.budget = &budget_;
    std::shared_ptr<ReadStream> stream =
        ReadStream::Create(reader, output, options);
    output->set_stream(stream);
    return stream;
  }
  ReadStream::Opened Open(std::shared_ptr<VerifiedBlob> blob, uint64_t offset,
                          uint64_t length,
                          PriorityClass c = PriorityClass::kBe) {
    const TreeGeometry& geometry = blob->geometry();
    const BlockRange blocks = BlocksOf(
        geometry,
        {offset, std::min<uint64_t>(offset + length, geometry.data_size())});
    return {std::make_shared<ReadJob>(std::move(blob), blocks, c, buffers_),
            ProofPlanner(geometry)};
  }
  std::shared_ptr<VerifiedBlob> Local() {
    return *VerifiedBlob::Create(Stored());
  }
  // Bytes [offset, offset + length) as whole blocks, as a stream sends them.
  std::string Expected(uint64_t offset, uint64_t length) const {
    const uint64_t first = offset / kBlock * kBlock;
    const uint64_t end = std::min<uint64_t>(
        (offset + length + kBlock - 1) / kBlock * kBlock, data_.size());
    return data_.substr(first, end - first);
  }

  std::shared_ptr<BufferPool> buffers_ = BufferPool::Create({});
  std::string data_;
  std::string digest_;
  ByteBudget budget_{uint64_t{64} << 20};
};

TEST_F(ReadStreamTest, EverythingAtOnce) {
  ScriptedReader reader([](int) { return true; });
  FakeOutput output(/*write_at_once=*/true);
  std::shared_ptr<ReadStream> stream = Stream(&reader, &output);
  stream->Start(Open(Local(), 0, data_.size()));
  ASSERT_TRUE(output.finished());
  EXPECT_EQ(output.WaitForFinish(), absl::OkStatus());
  EXPECT_TRUE(output.Data(0) == data_);
  // The chunk window grows while the client keeps up: fewer messages than
  // 8-block chunks would need.
  EXPECT_LT(output.messages(), kBlocks / 8);
  EXPECT_GT(output.tree_blocks(), 0u);
}

TEST_F(ReadStreamTest, EverythingLater) {
  ScriptedReader reader([](int) { return false; });
  FakeOutput output(/*write_at_once=*/false);
  std::shared_ptr<ReadStream> stream = Stream(&reader, &output);
  stream->Start(Open(Local(), 5000, 200 * kBlock));
  std::thread completer([&] {
    while (!output.finished()) {
      if (!reader.CompleteRead() && !output.CompleteWrite(absl::OkStatus())) {
        absl::SleepFor(absl::Microseconds(50));
      }
    }
  });
  EXPECT_EQ(output.WaitForFinish(), absl::OkStatus());
  completer.join();
  EXPECT_TRUE(output.Data(4096) == Expected(5000, 200 * kBlock));
}

TEST_F(ReadStreamTest, RandomInterleavings) {
  for (int round = 0; round < 60; ++round) {
    std::mt19937 random(round);
    SCOPED_TRACE(testing::Message() << "round " << round);
    const uint64_t offset = random() % data_.size();
    const uint64_t length = 1 + random() % (data_.size() - offset);
    std::vector<bool> script(1000);
    for (size_t i = 0; i < script.size(); ++i) script[i] = random() % 2;
    ScriptedReader reader([&script](int i) { return script[i % 1000]; });
    FakeOutput output(/*write_at_once=*/round % 3 == 0);
    std::shared_ptr<ReadStream> stream = Stream(&reader, &output);
    // Two threads complete reads and writes in whatever order they meet.
    std::vector<std::thread> completers;
    for (int t = 0; t < 2; ++t) {
      completers.emplace_back([&, t] {
        std::mt19937 mine(round * 2 + t);
        while (!output.finished()) {
          const bool read_first = mine() % 2;
          bool any = read_first ? reader.CompleteRead()
                                : output.CompleteWrite(absl::OkStatus());
          if (!any) {
            any = read_first ? output.CompleteWrite(absl::OkStatus())
                             : reader.CompleteRead();
          }
          if (!any) std::this_thread::yield();
        }
      });
    }
    stream->Start(Open(Local(), offset, length));
    EXPECT_EQ(output.WaitForFinish(), absl::OkStatus());
    for (std::thread& thread : completers) thread.join();
    EXPECT_FALSE(reader.reading());
    EXPECT_TRUE(output.Data(offset / kBlock * kBlock) ==
                Expected(offset, length));
  }
}

TEST_F(ReadStreamTest, TheClientCancellingMidChunkEndsItOnceTheReadIsIn) {
  ScriptedReader reader([](int i) { return i == 0; });
  FakeOutput output(/*write_at_once=*/false);
  std::shared_ptr<ReadStream> stream = Stream(&reader, &output);
  stream->Start(Open(Local(), 0, data_.size()));
  // The first chunk was read at once and is being written; the second is
  // being read.
  ASSERT_EQ(output.messages(), 1u);
  ASSERT_TRUE(reader.reading());
  stream->OnCancel();
  EXPECT_FALSE(output.finished()) << "finished with a read and a write out";
  ASSERT_TRUE(output.CompleteWrite(absl::OkStatus()));
  EXPECT_FALSE(output.finished()) << "finished with a read out";
  ASSERT_TRUE(reader.CompleteRead());
  EXPECT_EQ(output.WaitForFinish().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(output.messages(), 1u) << "a message after the cancel";
}

TEST_F(ReadStreamTest, AFailedWriteEndsTheStreamAndCancelsTheRead) {
  ScriptedReader reader([](int i) { return i == 0; });
  FakeOutput output(/*write_at_once=*/false);
  std::shared_ptr<ReadStream> stream = Stream(&reader, &output);
  ReadStream::Opened opened = Open(Local(), 0, data_.size());
  std::shared_ptr<ReadJob> job = opened.job;
  stream->Start(std::move(opened));
  ASSERT_TRUE(reader.reading());
  ASSERT_TRUE(output.CompleteWrite(absl::DeadlineExceededError("stalled")));
  EXPECT_TRUE(job->cancelled());
  EXPECT_FALSE(output.finished());
  ASSERT_TRUE(reader.CompleteRead());
  EXPECT_EQ(output.WaitForFinish().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(output.messages(), 1u);
}

TEST_F(ReadStreamTest, AFailedReadEndsTheStreamOnceTheWriteIsDone) {
  ScriptedReader reader([](int i) { return i == 0; });
  FakeOutput output(/*write_at_once=*/false);
  std::shared_ptr<ReadStream> stream = Stream(&reader, &output);
  stream->Start(Open(Local(), 0, data_.size()));
  ASSERT_TRUE(reader.CompleteRead(absl::DataLossError("bad block")));
  EXPECT_FALSE(output.finished());
  ASSERT_TRUE(output.CompleteWrite(absl::OkStatus()));
  EXPECT_EQ(output.WaitForFinish().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(output.messages(), 1u);
}

TEST_F(ReadStreamTest, ACancelBeforeTheStartEndsItAtTheStart) {
  ScriptedReader reader([](int) { return true; });
  FakeOutput output(/*write_at_once=*/true);
  std::shared_ptr<ReadStream> stream = Stream(&reader, &output);
  stream->OnCancel();
  EXPECT_FALSE(output.finished()) << "finished before it started";
  ReadStream::Opened opened = Open(Local(), 0, data_.size());
  std::shared_ptr<ReadJob> job = opened.job;
  stream->Start(std::move(opened));
  EXPECT_EQ(output.WaitForFinish().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(job->cancelled());
  EXPECT_EQ(output.messages(), 0u);
}

TEST_F(ReadStreamTest, AFailedOpenEndsItWithTheError) {
  ScriptedReader reader([](int) { return true; });
  FakeOutput output(/*write_at_once=*/true);
  std::shared_ptr<ReadStream> stream = Stream(&reader, &output);
  stream->Start(absl::NotFoundError("no such blob"));
  EXPECT_EQ(output.WaitForFinish().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(output.messages(), 0u);
}

TEST_F(ReadStreamTest, AnEmptyRangeSendsTheFirstMessageOnly) {
  ScriptedReader reader([](int) { return true; });
  FakeOutput output(/*write_at_once=*/false);
  std::shared_ptr<ReadStream> stream = Stream(&reader, &output);
  stream->Start(Open(Local(), data_.size(), 0));
  ASSERT_EQ(output.messages(), 1u);
  EXPECT_TRUE(output.Data(0).empty());
  ASSERT_TRUE(output.CompleteWrite(absl::OkStatus()));
  EXPECT_EQ(output.WaitForFinish(), absl::OkStatus());
}

// With the real Dispatcher and its pool.
class DispatchedReadStreamTest : public ReadStreamTest {
 protected:
  void SetUp() override {
    ReadStreamTest::SetUp();
    absl::StatusOr<std::unique_ptr<VerifyPool>> pool =
        VerifyPool::Create(VerifyPoolOptions());
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = *std::move(pool);
    DispatchOptions options;
    options.limits = InlineLimits::Uniform(64 * kBlock);
    options.budget.budget = absl::Hours(1);
    options.read_ahead_bytes = 16 * kBlock;
    dispatcher_ = std::make_unique<Dispatcher>(options, pool_, metrics_);
  }

  // Runs one stream of [offset, offset + length) of `blob` to its end, the
  // writes completed by another thread; returns its status and checks its
  // bytes.
  absl::Status RunStream(std::shared_ptr<VerifiedBlob> blob, uint64_t offset,
                         uint64_t length, PriorityClass c) {
    FakeOutput output(/*write_at_once=*/false);
    std::shared_ptr<ReadStream> stream = Stream(dispatcher_.get(), &output);
    std::thread writer([&] {
      while (!output.finished()) {
        if (!output.CompleteWrite(absl::OkStatus())) std::this_thread::yield();
      }
    });
    stream->Start(Open(std::move(blob), offset, length, c));
    absl::Status status = output.WaitForFinish();
    writer.join();
    if (status.ok()) {
      EXPECT_TRUE(output.Data(offset / kBlock * kBlock) ==
                  Expected(offset, length))
          << offset << "+" << length;
    }
    return status;
  }

  prometheus::Registry registry_;
  std::shared_ptr<DispatchMetrics> metrics_ =
      std::make_shared<DispatchMetrics>(registry_);
  std::shared_ptr<VerifyPool> pool_;
  std::unique_ptr<Dispatcher> dispatcher_;
};

// A remote blob behind a slab cache of one 64 KiB slab, read by eight streams
// at once: slabs are evicted between a chunk's steps (data here, then its
// tree not; here at one look, gone at the next), so chunks move between the
// completion thread, the pool and the store's threads in every order.
TEST_F(DispatchedReadStreamTest, EvictionBetweenStepsUnderConcurrency) {
  SlabCacheOptions slabs;
  slabs.slab_bytes = 64 << 10;
  slabs.memory_bytes = 64 << 10;
  slabs.max_fetch_bytes = 4 << 20;
  auto cache = std::make_shared<SlabCache>(slabs, nullptr);
  auto remote = std::make_shared<RemoteBlob>(Stored());
  std::shared_ptr<VerifiedBlob> blob =
      *VerifiedBlob::Create(std::make_shared<CachingBlob>(remote, cache));
  std::vector<std::thread> readers;
  for (int r = 0; r < 8; ++r) {
    readers.emplace_back([&, r] {
      std::mt19937 random(r);
      for (int i = 0; i < 12; ++i) {
        const uint64_t offset = random() % data_.size();
        const uint64_t length = 1 + random() % (64 * kBlock);
        const PriorityClass c = i % 2 ? PriorityClass::kRt : PriorityClass::kBe;
        EXPECT_EQ(RunStream(blob, offset, length, c), absl::OkStatus());
      }
    });
  }
  for (std::thread& reader : readers) reader.join();
  EXPECT_GT(cache->stats().misses, 8u);
  // No verification failed (which would drop the slab): no chunk was ever
  // verified before its bytes arrived.
  EXPECT_EQ(cache->stats().discarded, 0u);
}

// A blob as a cache serves it, whose cached copy of the data is bad: the
// chunk fails verification, the copy is dropped, and the chunk is fetched
// again from the store, inline and pooled alike.
class BadCopyBlob final : public Blob {
 public:
  explicit BadCopyBlob(std::shared_ptr<const Blob> local)
      : Blob(*local), local_(std::move(local)) {}
  std::optional<absl::Status> TryReadNow(
      BlobPart part, uint64_t offset, absl::Span<uint8_t> out) const override {
    std::optional<absl::Status> status = local_->TryReadNow(part, offset, out);
    if (part == BlobPart::kData && bad_copy_.load() && !out.empty()) {
      out[0] ^= 1;
    }
    return status;
  }
  void ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                 ReadDone done) const override {
    local_->ReadAsync(part, offset, std::move(into), std::move(done));
  }
  void Prefetch(BlobPart, uint64_t, uint64_t) const override {}
  bool Forget(BlobPart part, uint64_t, uint64_t) const override {
    return part == BlobPart::kData && bad_copy_.exchange(false);
  }

 private:
  const std::shared_ptr<const Blob> local_;
  mutable std::atomic<bool> bad_copy_{true};
};

TEST_F(DispatchedReadStreamTest, AChunkFailingVerificationIsFetchedAgain) {
  for (PriorityClass c : {PriorityClass::kRt, PriorityClass::kBe}) {
    std::shared_ptr<VerifiedBlob> blob =
        *VerifiedBlob::Create(std::make_shared<BadCopyBlob>(Stored()));
    EXPECT_EQ(
        RunStream(blob, 0, c == PriorityClass::kRt ? kBlock : 40 * kBlock, c),
        absl::OkStatus());
  }
}

TEST_F(DispatchedReadStreamTest, ARemoteBlobStreamsWhole) {
  auto remote = std::make_shared<RemoteBlob>(Stored());
  EXPECT_EQ(RunStream(*VerifiedBlob::Create(remote), 0, data_.size(),
                      PriorityClass::kBe),
            absl::OkStatus());
  EXPECT_GT(remote->reads(BlobPart::kData), 1);
}

}  // namespace
}  // namespace verity::server
