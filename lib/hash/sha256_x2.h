// Two SHA-256 message streams compressed at once with interleaved SHA-NI
// rounds: the two chains are independent, so the CPU overlaps their
// latency-bound rounds and two blocks cost little more than one. This is the
// kernel's sha256_finup_2x idea (Eric Biggers), which fs-verity and dm-verity
// use to verify two data blocks at a time.
//
// Only the compression function lives here; BlockHasher pads and finishes.

#ifndef VERITYD_LIB_HASH_SHA256_X2_H_
#define VERITYD_LIB_HASH_SHA256_X2_H_

#include <cstddef>
#include <cstdint>

namespace verity {

// SHA-256 chaining state in the standard word order (H0..H7).
struct Sha256State {
  uint32_t h[8];
};

// True if this CPU can run Sha256CompressX2 (SHA-NI, SSSE3, SSE4.1), checked
// once with CPUID, and it was not turned off for a test.
bool Sha256X2Available();

// Test-only: makes Sha256X2Available() false (true again with `false`), so
// that the fallback path runs on a CPU that has SHA-NI.
void DisableSha256X2ForTesting(bool disabled);

// Compresses `blocks` 64-byte blocks from `a` into `state_a` and as many from
// `b` into `state_b`. Requires Sha256X2Available(). Any alignment.
void Sha256CompressX2(Sha256State* state_a, Sha256State* state_b,
                      const uint8_t* a, const uint8_t* b, size_t blocks);

}  // namespace verity

#endif  // VERITYD_LIB_HASH_SHA256_X2_H_
