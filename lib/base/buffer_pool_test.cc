// BufferPool hands the same memory back out, serves each request from the
// smallest size that holds it, keeps no more idle than its bound (dropping
// other sizes first), serves oversize requests with one-off buffers, takes
// buffers back from any thread, and lives as long as the buffers it handed
// out; every buffer starts on a page (for O_DIRECT).

#include "lib/base/buffer_pool.h"

#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace verity {
namespace {

// One size only, unless `min_buffer_bytes` is given.
std::shared_ptr<BufferPool> Pool(size_t buffer_bytes, size_t max_idle_bytes,
                                 size_t min_buffer_bytes = 0) {
  BufferPoolOptions options;
  options.min_buffer_bytes =
      min_buffer_bytes != 0 ? min_buffer_bytes : buffer_bytes;
  options.max_buffer_bytes = buffer_bytes;
  options.max_idle_bytes = max_idle_bytes;
  return BufferPool::Create(options);
}

TEST(BufferPoolTest, AReturnedBufferComesBackAsItWasLeft) {
  auto pool = Pool(4096, 4096);
  const uint8_t* memory;
  {
    Buffer buffer = pool->Take(100);
    ASSERT_EQ(buffer.size(), 100u);
    memory = buffer.data();
    std::memset(buffer.data(), 0xab, buffer.size());
  }
  EXPECT_EQ(pool->stats().idle_bytes, 4096u);
  Buffer again = pool->Take(3000);
  EXPECT_EQ(again.data(), memory);
  EXPECT_EQ(again.size(), 3000u);
  // Not zero-filled on the way back out.
  for (size_t i = 0; i < 100; ++i) ASSERT_EQ(again.data()[i], 0xab) << i;
  const BufferPoolStats stats = pool->stats();
  EXPECT_EQ(stats.allocated, 1u);
  EXPECT_EQ(stats.reused, 1u);
  EXPECT_EQ(stats.idle_bytes, 0u);
}

TEST(BufferPoolTest, KeepsNoMoreIdleThanItsBound) {
  auto pool = Pool(1024, 3 * 1024);
  std::vector<Buffer> taken;
  for (int i = 0; i < 5; ++i) taken.push_back(pool->Take(1024));
  taken.clear();
  BufferPoolStats stats = pool->stats();
  EXPECT_EQ(stats.idle_bytes, 3 * 1024u);
  EXPECT_EQ(stats.freed, 2u);
  for (int i = 0; i < 5; ++i) taken.push_back(pool->Take(1));
  stats = pool->stats();
  EXPECT_EQ(stats.reused, 3u);
  EXPECT_EQ(stats.allocated, 7u);
  EXPECT_EQ(stats.idle_bytes, 0u);
}

TEST(BufferPoolTest, ARequestTakesTheSmallestSizeThatHoldsIt) {
  // Sizes 1000, 2000, 4000, 5000.
  auto pool = Pool(5000, 64 * 1024, 1000);
  const std::vector<std::pair<size_t, size_t>> cases = {
      {1, 1000},    {1000, 1000}, {1001, 2000}, {2000, 2000},
      {3999, 4000}, {4001, 5000}, {5000, 5000}};
  std::set<size_t> idle;
  for (const auto& [size, capacity] : cases) {
    { Buffer buffer = pool->Take(size); }
    idle.insert(capacity);
    EXPECT_EQ(pool->stats().idle_bytes,
              std::accumulate(idle.begin(), idle.end(), size_t{0}))
        << size;
  }
  // Each size is reused only for its own requests.
  EXPECT_EQ(pool->stats().allocated, 4u);
  EXPECT_EQ(pool->stats().reused, 3u);
}

TEST(BufferPoolTest, AFullPoolDropsOtherSizesLargestFirst) {
  // Sizes 1024, 2048, 4096; room for 7 KiB idle.
  auto pool = Pool(4096, 7168, 1024);
  {
    Buffer big = pool->Take(4096);
    Buffer middle = pool->Take(2048);
    Buffer small = pool->Take(1024);
  }
  EXPECT_EQ(pool->stats().idle_bytes, 7168u);
  // Two small ones in use, one of them new; when both are back, the second
  // does not fit: the 4 KiB buffer goes for it.
  {
    Buffer small = pool->Take(1024);
    Buffer another = pool->Take(1024);
    EXPECT_EQ(pool->stats().allocated, 4u);
  }
  BufferPoolStats stats = pool->stats();
  EXPECT_EQ(stats.freed, 1u);
  EXPECT_EQ(stats.idle_bytes, 2048u + 1024 + 1024);
  // What is idle follows what is taken: small buffers are reused now.
  {
    Buffer a = pool->Take(1000);
    Buffer b = pool->Take(1000);
  }
  EXPECT_EQ(pool->stats().allocated, 4u);
  // Eight small ones come back: seven fill the bound (the 2 KiB one goes
  // for them); the eighth is not kept, and drops nothing (dropping every
  // other size would not make room for it).
  {
    std::vector<Buffer> small;
    for (int i = 0; i < 8; ++i) small.push_back(pool->Take(1024));
  }
  stats = pool->stats();
  EXPECT_EQ(stats.idle_bytes, 7168u);
  EXPECT_EQ(stats.freed, 3u);  // the 4 KiB, the 2 KiB, the eighth small
  // A big one back drops four small ones to fit.
  { Buffer big = pool->Take(4096); }
  EXPECT_EQ(pool->stats().idle_bytes, 3 * 1024u + 4096);
  EXPECT_EQ(pool->stats().freed, 7u);
}

TEST(BufferPoolTest, AZeroBoundKeepsNothing) {
  auto pool = Pool(1024, 0);
  { Buffer buffer = pool->Take(10); }
  EXPECT_EQ(pool->stats().idle_bytes, 0u);
  EXPECT_EQ(pool->stats().freed, 1u);
}

TEST(BufferPoolTest, OversizeRequestsGetOneOffBuffers) {
  auto pool = Pool(1024, 8 * 1024);
  {
    Buffer exact = pool->Take(1024);
    Buffer over = pool->Take(1025);
    EXPECT_EQ(exact.size(), 1024u);
    EXPECT_EQ(over.size(), 1025u);
    std::memset(over.data(), 1, over.size());
  }
  const BufferPoolStats stats = pool->stats();
  EXPECT_EQ(stats.one_off, 1u);
  EXPECT_EQ(stats.allocated, 1u);
  // Only the pooled one came back.
  EXPECT_EQ(stats.idle_bytes, 1024u);
}

TEST(BufferPoolTest, EveryBufferStartsOnAPage) {
  auto pool = Pool(64 * 1024, 1024 * 1024, 16);
  std::vector<Buffer> held;
  for (const size_t size : {1, 16, 100, 4096, 5000, 65536, 65537}) {
    held.push_back(pool->Take(size));
  }
  held.push_back(Buffer::Allocate(3));
  for (const Buffer& buffer : held) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % kBufferAlignment, 0u)
        << buffer.size();
  }
}

TEST(BufferPoolTest, EmptyRequestsTakeNothing) {
  auto pool = Pool(1024, 8 * 1024);
  Buffer empty = pool->Take(0);
  EXPECT_TRUE(empty.empty());
  EXPECT_TRUE(Buffer::Allocate(0).empty());
  const BufferPoolStats stats = pool->stats();
  EXPECT_EQ(stats.allocated + stats.reused + stats.one_off, 0u);
}

TEST(BufferPoolTest, MovesCarryTheBufferAndAssignmentReturnsTheOldOne) {
  auto pool = Pool(1024, 8 * 1024);
  Buffer a = pool->Take(10);
  const uint8_t* memory = a.data();
  Buffer b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(b.data(), memory);
  EXPECT_EQ(b.size(), 10u);
  b = pool->Take(20);
  EXPECT_EQ(pool->stats().idle_bytes, 1024u);
  b = Buffer();
  EXPECT_EQ(pool->stats().idle_bytes, 2048u);
}

TEST(BufferPoolTest, OneOffBuffersBelongToNoPool) {
  Buffer buffer = Buffer::Allocate(5000);
  EXPECT_EQ(buffer.size(), 5000u);
  std::memset(buffer.data(), 7, buffer.size());
}

TEST(BufferPoolTest, ABufferOutlivesThePoolsLastUser) {
  auto pool = Pool(1024, 8 * 1024);
  std::weak_ptr<BufferPool> watch = pool;
  Buffer buffer = pool->Take(100);
  pool.reset();
  EXPECT_FALSE(watch.expired());  // the buffer holds it
  std::memset(buffer.data(), 1, buffer.size());
  buffer = Buffer();  // returned into the pool, which then goes
  EXPECT_TRUE(watch.expired());
}

// Threads take buffers, fill them with their own pattern and hand them to
// other threads, which check the pattern and let go of them: no buffer is
// ever handed to two owners at once, and returns from any thread are safe
// (run under --config=tsan too).
TEST(BufferPoolTest, BuffersMoveBetweenThreads) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  constexpr size_t kBufferBytes = 4096;
  auto pool = Pool(kBufferBytes, 4 * kBufferBytes);
  absl::Mutex mu;
  std::deque<std::pair<int, Buffer>> passed;  // under mu
  std::vector<std::thread> threads;
  std::vector<int> bad(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        // Some requests overflow the pool's buffers.
        const size_t size = 1 + (i * 131 + t * 17) % (kBufferBytes + 512);
        Buffer buffer = pool->Take(size);
        const int mark = (t * kRounds + i) & 0xff;
        std::memset(buffer.data(), mark, buffer.size());
        std::pair<int, Buffer> other;
        {
          absl::MutexLock lock(&mu);
          passed.emplace_back(mark, std::move(buffer));
          other = std::move(passed.front());
          passed.pop_front();
        }
        for (size_t j = 0; j < other.second.size(); ++j) {
          if (other.second.data()[j] != other.first) {
            ++bad[t];
            break;
          }
        }
      }  // `other` goes back from this thread, whoever filled it
    });
  }
  for (std::thread& thread : threads) thread.join();
  {
    absl::MutexLock lock(&mu);
    passed.clear();
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << t;
  const BufferPoolStats stats = pool->stats();
  EXPECT_LE(stats.idle_bytes, 4 * kBufferBytes);
  EXPECT_GT(stats.reused, 0u);
  EXPECT_GT(stats.one_off, 0u);
  EXPECT_EQ(stats.allocated + stats.reused + stats.one_off,
            uint64_t{kThreads} * kRounds);
}

}  // namespace
}  // namespace verity
