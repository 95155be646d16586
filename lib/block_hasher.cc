// Implements BlockHasher.

#include "lib/block_hasher.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cstring>

namespace verity {
namespace {

void UpdateZeros(Hasher* hasher, uint64_t count) {
  static constexpr uint8_t kZeros[4096] = {};
  while (count > 0) {
    const uint64_t n = std::min<uint64_t>(count, sizeof(kZeros));
    hasher->Update(absl::MakeConstSpan(kZeros, n));
    count -= n;
  }
}

// fs-verity pads the salt to a whole number of compression-function blocks
// so the salted state is a clean prefix that can be computed once.
Hasher SaltedHasher(HashAlgorithm algorithm, absl::string_view salt) {
  Hasher hasher(algorithm);
  if (salt.empty()) return hasher;
  const size_t unit = HashBlockSize(algorithm);
  hasher.Update(AsBytes(salt));
  UpdateZeros(&hasher, (unit - salt.size() % unit) % unit);
  return hasher;
}

// The SHA-256 state after fs-verity's padded salt.
Sha256State SaltedSha256State(absl::string_view salt) {
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  Sha256State state;
  std::memcpy(state.h, ctx.h, sizeof(state.h));
  if (salt.empty()) return state;  // the assembly requires >= 1 block
  std::string padded(salt);
  padded.resize((salt.size() + 63) / 64 * 64, '\0');
  SHA256_TransformBlocks(state.h, AsBytes(padded).data(), padded.size() / 64);
  return state;
}

void WriteDigest(const Sha256State& state, uint8_t* digest) {
  for (uint32_t word : state.h) {
    for (int shift = 24; shift >= 0; shift -= 8) *digest++ = word >> shift;
  }
}

}  // namespace

BlockHasher::BlockHasher(const MerkleParams& params)
    : block_size_(params.block_size),
      salted_(SaltedHasher(params.hash_algorithm, params.salt)),
      sha256_(params.hash_algorithm == HashAlgorithm::kSha256),
      salted_state_(sha256_ ? SaltedSha256State(params.salt) : Sha256State{}),
      final_padding_{0x80} {
  const uint64_t salted_bytes = (params.salt.size() + 63) / 64 * 64;
  const uint64_t bits = (salted_bytes + block_size_) * 8;
  for (int i = 0; i < 8; ++i) final_padding_[63 - i] = bits >> (8 * i);
}

void BlockHasher::FinishBlock(Hasher* hasher, uint64_t filled,
                              absl::Span<uint8_t> out) const {
  if (filled < block_size_) UpdateZeros(hasher, block_size_ - filled);
  hasher->Finish(out);
}

void BlockHasher::HashTwoBlocks(const uint8_t* a, const uint8_t* b,
                                uint8_t* digest_a, uint8_t* digest_b) const {
  if (!UseX2()) {
    HashBlock(absl::MakeConstSpan(a, block_size_),
              absl::MakeSpan(digest_a, digest_size()));
    HashBlock(absl::MakeConstSpan(b, block_size_),
              absl::MakeSpan(digest_b, digest_size()));
    return;
  }
  Sha256State state_a = salted_state_;
  Sha256State state_b = salted_state_;
  Sha256CompressX2(&state_a, &state_b, a, b, block_size_ / 64);
  Sha256CompressX2(&state_a, &state_b, final_padding_, final_padding_, 1);
  WriteDigest(state_a, digest_a);
  WriteDigest(state_b, digest_b);
}

void BlockHasher::HashBlocks(absl::Span<const uint8_t> data,
                             absl::Span<uint8_t> out) const {
  const size_t digest_size = this->digest_size();
  while (data.size() >= 2 * size_t{block_size_}) {
    HashTwoBlocks(data.data(), data.data() + block_size_, out.data(),
                  out.data() + digest_size);
    data.remove_prefix(2 * size_t{block_size_});
    out.remove_prefix(2 * digest_size);
  }
  while (!data.empty()) {  // one whole or short block, or a whole and a short
    const size_t n = std::min<size_t>(data.size(), block_size_);
    HashBlock(data.first(n), out.first(digest_size));
    data.remove_prefix(n);
    out.remove_prefix(digest_size);
  }
}

void BlockHasher::HashBlock(absl::Span<const uint8_t> block,
                            absl::Span<uint8_t> out) const {
  block = block.first(std::min<size_t>(block.size(), block_size_));
  Hasher hasher = salted_;
  hasher.Update(block);
  FinishBlock(&hasher, block.size(), out);
}

}  // namespace verity
