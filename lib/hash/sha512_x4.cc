// Sha512CompressX4: FIPS 180-4's SHA-512 compression, with every 64-bit word
// a vector of the four lanes' words. Built with -mavx2 (this file only), and
// it includes nothing but the intrinsics, so no inline function compiled with
// AVX2 can be picked by the linker for callers on other CPUs.

#include "lib/hash/sha512_x4.h"

#include <immintrin.h>

namespace verity {
namespace {

constexpr uint64_t kRound[80] = {
    0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc, 0x3956c25bf348b538, 0x59f111f1b605d019,
    0x923f82a4af194f9b, 0xab1c5ed5da6d8118, 0xd807aa98a3030242,
    0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235,
    0xc19bf174cf692694, 0xe49b69c19ef14ad2, 0xefbe4786384f25e3,
    0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65, 0x2de92c6f592b0275,
    0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
    0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f,
    0xbf597fc7beef0ee4, 0xc6e00bf33da88fc2, 0xd5a79147930aa725,
    0x06ca6351e003826f, 0x142929670a0e6e70, 0x27b70a8546d22ffc,
    0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
    0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6,
    0x92722c851482353b, 0xa2bfe8a14cf10364, 0xa81a664bbc423001,
    0xc24b8b70d0f89791, 0xc76c51a30654be30, 0xd192e819d6ef5218,
    0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99,
    0x34b0bcb5e19b48a8, 0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb,
    0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3, 0x748f82ee5defb2fc,
    0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
    0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915,
    0xc67178f2e372532b, 0xca273eceea26619c, 0xd186b8c721c0c207,
    0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178, 0x06f067aa72176fba,
    0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
    0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c, 0x4cc5d4becb3e42b6, 0x597f299cfc657e2a,
    0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
};

inline __m256i Add(__m256i a, __m256i b) { return _mm256_add_epi64(a, b); }

inline __m256i Xor(__m256i a, __m256i b, __m256i c) {
  return _mm256_xor_si256(_mm256_xor_si256(a, b), c);
}

template <int kBits>
inline __m256i Rotr(__m256i x) {
  return _mm256_or_si256(_mm256_srli_epi64(x, kBits),
                         _mm256_slli_epi64(x, 64 - kBits));
}

// Words t..t+3 of each lane's block, as four vectors of one word per lane:
// each lane's 32 bytes are loaded and byte-swapped (SHA-512 is big-endian),
// then the 4x4 matrix of words is transposed.
inline void LoadWords(const uint8_t* const in[4], size_t offset, __m256i* w) {
  const __m256i swap =
      _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,  //
                       7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
  __m256i row[4];
  for (int lane = 0; lane < 4; ++lane) {
    row[lane] = _mm256_shuffle_epi8(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in[lane] + offset)),
        swap);
  }
  const __m256i even01 = _mm256_unpacklo_epi64(row[0], row[1]);
  const __m256i odd01 = _mm256_unpackhi_epi64(row[0], row[1]);
  const __m256i even23 = _mm256_unpacklo_epi64(row[2], row[3]);
  const __m256i odd23 = _mm256_unpackhi_epi64(row[2], row[3]);
  w[0] = _mm256_permute2x128_si256(even01, even23, 0x20);
  w[1] = _mm256_permute2x128_si256(odd01, odd23, 0x20);
  w[2] = _mm256_permute2x128_si256(even01, even23, 0x31);
  w[3] = _mm256_permute2x128_si256(odd01, odd23, 0x31);
}

// W[t] for t >= 16, in the 16-word ring `w`.
inline __m256i NextWord(__m256i* w, int t) {
  const __m256i w15 = w[(t - 15) & 15];
  const __m256i w2 = w[(t - 2) & 15];
  const __m256i s0 = Xor(Rotr<1>(w15), Rotr<8>(w15), _mm256_srli_epi64(w15, 7));
  const __m256i s1 = Xor(Rotr<19>(w2), Rotr<61>(w2), _mm256_srli_epi64(w2, 6));
  w[t & 15] = Add(Add(w[t & 15], s0), Add(w[(t - 7) & 15], s1));
  return w[t & 15];
}

void CompressBlock(const uint8_t* const in[4], size_t offset, __m256i* s) {
  __m256i w[16];
  for (int t = 0; t < 16; t += 4) LoadWords(in, offset + 8 * t, w + t);
  __m256i a = s[0], b = s[1], c = s[2], d = s[3];
  __m256i e = s[4], f = s[5], g = s[6], h = s[7];
  for (int t = 0; t < 80; ++t) {
    const __m256i wt = t < 16 ? w[t] : NextWord(w, t);
    const __m256i ch =
        _mm256_xor_si256(_mm256_and_si256(e, f), _mm256_andnot_si256(e, g));
    const __m256i t1 = Add(Add(h, Xor(Rotr<14>(e), Rotr<18>(e), Rotr<41>(e))),
                           Add(ch, Add(_mm256_set1_epi64x(kRound[t]), wt)));
    const __m256i maj = _mm256_or_si256(
        _mm256_and_si256(a, b), _mm256_and_si256(c, _mm256_or_si256(a, b)));
    const __m256i t2 = Add(Xor(Rotr<28>(a), Rotr<34>(a), Rotr<39>(a)), maj);
    h = g;
    g = f;
    f = e;
    e = Add(d, t1);
    d = c;
    c = b;
    b = a;
    a = Add(t1, t2);
  }
  s[0] = Add(s[0], a);
  s[1] = Add(s[1], b);
  s[2] = Add(s[2], c);
  s[3] = Add(s[3], d);
  s[4] = Add(s[4], e);
  s[5] = Add(s[5], f);
  s[6] = Add(s[6], g);
  s[7] = Add(s[7], h);
}

}  // namespace

void Sha512CompressX4(Sha512State* const states[4], const uint8_t* const in[4],
                      size_t blocks) {
  __m256i s[8];
  for (int i = 0; i < 8; ++i) {
    s[i] = _mm256_setr_epi64x(states[0]->h[i], states[1]->h[i], states[2]->h[i],
                              states[3]->h[i]);
  }
  for (size_t block = 0; block < blocks; ++block) {
    CompressBlock(in, 128 * block, s);
  }
  for (int i = 0; i < 8; ++i) {
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s[i]);
    for (int lane = 0; lane < 4; ++lane) states[lane]->h[i] = lanes[lane];
  }
}

}  // namespace verity
