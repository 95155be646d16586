// RetainFreedMemory against glibc's own bookkeeping (mallinfo2): whether a
// block came from mmap and how much of the heap stays after a free. Sanitizers
// bring their own allocator, so the test only runs without them.

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

// Whether glibc serves a block of `size` by mmap: the bytes it reports in
// mmapped blocks (mallinfo2's hblkhd) grow while the block is held.
bool Mmapped(size_t size) {
  const size_t before = mallinfo2().hblkhd;
  void* p = std::malloc(size);
  // The block escapes: the compiler may not drop the malloc and free.
  asm volatile("" : : "r"(p) : "memory");
  const bool mmapped = mallinfo2().hblkhd > before;
  std::free(p);
  return mmapped;
}

TEST(RetainedMemoryTest, RaisesGlibcsThresholdsAndNeverLowersThem) {
#ifdef VERITYD_SANITIZED
  GTEST_SKIP() << "the sanitizer's allocator is not glibc's";
#endif
  // glibc's default threshold, 128 KiB, set again: what the process freed
  // before the test (gtest's own blocks) may have raised its dynamic one.
  ASSERT_EQ(mallopt(M_MMAP_THRESHOLD, 128 << 10), 1);
  ASSERT_TRUE(Mmapped(kMiB)) << "not glibc's malloc";
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
