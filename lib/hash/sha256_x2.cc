// Sha256CompressX2 with SHA-NI. This file alone is built with -msha -msse4.1
// and includes nothing but the intrinsics, so no inline function compiled here
// with those instructions can be picked by the linker for other callers.

#include "lib/hash/sha256_x2.h"

#include <immintrin.h>

namespace verity {
namespace {

alignas(16) constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// SHA-NI keeps the eight state words as two vectors, ABEF and CDGH.
struct Lane {
  __m128i abef;
  __m128i cdgh;
};

Lane Load(const Sha256State& state) {
  const __m128i cdab = _mm_shuffle_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state.h[0])), 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state.h[4])), 0x1B);
  return {_mm_alignr_epi8(cdab, efgh, 8), _mm_blend_epi16(efgh, cdab, 0xF0)};
}

void Store(const Lane& lane, Sha256State* state) {
  const __m128i feba = _mm_shuffle_epi32(lane.abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(lane.cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state->h[0]),
                   _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state->h[4]),
                   _mm_alignr_epi8(dchg, feba, 8));
}

// Message words 4i..4i+3, read big-endian.
__m128i LoadWords(const uint8_t* block, int i) {
  const __m128i big_endian =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  return _mm_shuffle_epi8(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * i)),
      big_endian);
}

// Words 4i..4i+3 of the schedule from the four groups before them.
__m128i NextWords(__m128i minus4, __m128i minus3, __m128i minus2,
                  __m128i minus1) {
  __m128i words = _mm_sha256msg1_epu32(minus4, minus3);
  words = _mm_add_epi32(words, _mm_alignr_epi8(minus1, minus2, 4));
  return _mm_sha256msg2_epu32(words, minus1);
}

// Rounds 4i..4i+3.
void FourRounds(Lane* lane, __m128i words, int i) {
  const __m128i k =
      _mm_load_si128(reinterpret_cast<const __m128i*>(&kRoundConstants[4 * i]));
  const __m128i input = _mm_add_epi32(words, k);
  lane->cdgh = _mm_sha256rnds2_epu32(lane->cdgh, lane->abef, input);
  lane->abef = _mm_sha256rnds2_epu32(lane->abef, lane->cdgh,
                                     _mm_shuffle_epi32(input, 0x0E));
}

// One 64-byte block into each lane. The two chains share no data, so the
// out-of-order core runs lane b's rounds in the latency of lane a's.
void CompressBlocks(Lane* a, Lane* b, const uint8_t* block_a,
                    const uint8_t* block_b) {
  const Lane start_a = *a;
  const Lane start_b = *b;
  __m128i wa[4];
  __m128i wb[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    wa[i] = LoadWords(block_a, i);
    wb[i] = LoadWords(block_b, i);
    FourRounds(a, wa[i], i);
    FourRounds(b, wb[i], i);
  }
#pragma GCC unroll 12
  for (int i = 4; i < 16; ++i) {
    wa[i & 3] =
        NextWords(wa[i & 3], wa[(i + 1) & 3], wa[(i + 2) & 3], wa[(i + 3) & 3]);
    wb[i & 3] =
        NextWords(wb[i & 3], wb[(i + 1) & 3], wb[(i + 2) & 3], wb[(i + 3) & 3]);
    FourRounds(a, wa[i & 3], i);
    FourRounds(b, wb[i & 3], i);
  }
  a->abef = _mm_add_epi32(a->abef, start_a.abef);
  a->cdgh = _mm_add_epi32(a->cdgh, start_a.cdgh);
  b->abef = _mm_add_epi32(b->abef, start_b.abef);
  b->cdgh = _mm_add_epi32(b->cdgh, start_b.cdgh);
}

}  // namespace

void Sha256CompressX2(Sha256State* state_a, Sha256State* state_b,
                      const uint8_t* a, const uint8_t* b, size_t blocks) {
  Lane lane_a = Load(*state_a);
  Lane lane_b = Load(*state_b);
  for (size_t i = 0; i < blocks; ++i) {
    CompressBlocks(&lane_a, &lane_b, a + 64 * i, b + 64 * i);
  }
  Store(lane_a, state_a);
  Store(lane_b, state_b);
}

}  // namespace verity
