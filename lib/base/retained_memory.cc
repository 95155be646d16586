// Implements RetainFreedMemory with mallopt. Setting either threshold
// also turns off glibc's dynamic mmap threshold, which would otherwise move
// with the sizes freed.

#include "lib/base/retained_memory.h"

#include <malloc.h>

#include <algorithm>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace verity {
namespace {

// glibc refuses an mmap threshold above HEAP_MAX_SIZE / 2: 32 MiB on 64-bit.
constexpr size_t kMaxMmapThreshold = size_t{32} << 20;

absl::Mutex mu(absl::kConstInit);
// What this process set last; 0 before.
size_t retained ABSL_GUARDED_BY(mu) = 0;

}  // namespace

void RetainFreedMemory(size_t bytes) {
  absl::MutexLock lock(&mu);
  if (bytes <= retained) return;
  retained = bytes;
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<size_t>(bytes, 1 << 30)));
  mallopt(M_MMAP_THRESHOLD,
          static_cast<int>(std::min(bytes, kMaxMmapThreshold)));
}

}  // namespace verity
