// RetainFreedMemory against glibc's own bookkeeping: whether a block came
// from mmap (the IS_MMAPPED bit of its chunk header) and how much of the heap
// stays after a free (mallinfo2). Sanitizers bring their own allocator, so
// the test only runs without them.

#include "lib/base/retained_memory.h"

#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VERITYD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define VERITYD_SANITIZED 1
#endif
#endif

namespace verity {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// glibc's chunk header: the size word before the user pointer, whose bit 1
// says the chunk was mmapped.
bool Mmapped(size_t size) {
  void* p = std::malloc(size);
  std::memset(p, 1, size);
  size_t header;
  std::memcpy(&header, static_cast<char*>(p) - sizeof(size_t), sizeof header);
  std::free(p);
  return (header & 2) != 0;
}

TEST(RetainedMemoryTest, RaisesGlibcsThresholdsAndNeverLowersThem) {
#ifdef VERITYD_SANITIZED
  GTEST_SKIP() << "the sanitizer's allocator is not glibc's";
#endif
  // A fresh process: glibc serves 1 MiB by mmap (threshold 128 KiB).
  ASSERT_TRUE(Mmapped(kMiB)) << "not glibc's malloc with its defaults";
  RetainFreedMemory(4 * kMiB);
  EXPECT_FALSE(Mmapped(kMiB));
  EXPECT_FALSE(Mmapped(3 * kMiB));
  EXPECT_TRUE(Mmapped(5 * kMiB));
  RetainFreedMemory(kMiB);  // lower: ignored
  EXPECT_FALSE(Mmapped(3 * kMiB));
  RetainFreedMemory(64 * kMiB);  // the mmap threshold stops at 32 MiB
  EXPECT_FALSE(Mmapped(16 * kMiB));
  EXPECT_TRUE(Mmapped(40 * kMiB));
  // Freed memory below the trim threshold stays with the process.
  void* p = std::malloc(16 * kMiB);
  std::memset(p, 1, 16 * kMiB);
  std::free(p);
  EXPECT_GE(mallinfo2().arena, 16 * kMiB);
}

}  // namespace
}  // namespace verity
