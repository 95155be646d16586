// Sha512X4Available: compiled without -mavx2, so it runs on any x86-64 CPU.

#include <atomic>

#include "lib/hash/sha512_x4.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace verity {
namespace {

bool CpuHasAvx2() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  if (!(ecx & bit_OSXSAVE) || !(ecx & bit_AVX)) return false;
  // The OS must save the XMM and YMM state across context switches.
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0x6) != 0x6) return false;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return ebx & bit_AVX2;
#else
  return false;
#endif
}

std::atomic<bool> disabled_for_testing{false};

}  // namespace

bool Sha512X4Available() {
  static const bool has_avx2 = CpuHasAvx2();
  return has_avx2 && !disabled_for_testing.load(std::memory_order_relaxed);
}

void DisableSha512X4ForTesting(bool disabled) {
  disabled_for_testing.store(disabled, std::memory_order_relaxed);
}

}  // namespace verity
