// Four SHA-512 message streams compressed at once, one per 64-bit lane of
// AVX2 registers. SHA-512 has no instructions of its own on most x86-64 CPUs
// (SHA-NI covers SHA-1 and SHA-256), and BoringSSL compresses one block at a
// time; four lanes of ordinary vector arithmetic hash four fs-verity blocks in
// well under four times the time of one (docs/hashing.md).
//
// Only the compression function lives here; BlockHasher pads and finishes.

#ifndef VERITYD_LIB_HASH_SHA512_X4_H_
#define VERITYD_LIB_HASH_SHA512_X4_H_

#include <cstddef>
#include <cstdint>

namespace verity {

// SHA-512 chaining state in the standard word order (H0..H7).
struct Sha512State {
  uint64_t h[8];
};

// True if this CPU can run Sha512CompressX4 (AVX2, with the OS saving the
// YMM registers), checked once with CPUID, and it was not turned off for a
// test.
bool Sha512X4Available();

// Test-only: makes Sha512X4Available() false (true again with `false`), so
// that the fallback path runs on a CPU that has AVX2.
void DisableSha512X4ForTesting(bool disabled);

// Compresses `blocks` 128-byte blocks from in[i] into *states[i], for each of
// the four lanes i. Requires Sha512X4Available(). Any alignment.
void Sha512CompressX4(Sha512State* const states[4], const uint8_t* const in[4],
                      size_t blocks);

}  // namespace verity

#endif  // VERITYD_LIB_HASH_SHA512_X4_H_
