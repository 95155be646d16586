// Sha256X2Available: compiled without -msha, so it runs on any x86-64 CPU.

#include <atomic>

#include "lib/hash/sha256_x2.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace verity {
namespace {

bool CpuHasShaNi() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool ssse3 = ecx & bit_SSSE3;
  const bool sse41 = ecx & bit_SSE4_1;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return ssse3 && sse41 && (ebx & bit_SHA);
#else
  return false;
#endif
}

std::atomic<bool> disabled_for_testing{false};

}  // namespace

bool Sha256X2Available() {
  static const bool has_sha_ni = CpuHasShaNi();
  return has_sha_ni && !disabled_for_testing.load(std::memory_order_relaxed);
}

void DisableSha256X2ForTesting(bool disabled) {
  disabled_for_testing.store(disabled, std::memory_order_relaxed);
}

}  // namespace verity
