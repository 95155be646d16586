// Implements BlockHasher.

#include "lib/block_hasher.h"

#include <algorithm>

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

}  // namespace

BlockHasher::BlockHasher(const MerkleParams& params)
    : block_size_(params.block_size),
      salted_(SaltedHasher(params.hash_algorithm, params.salt)) {}

void BlockHasher::FinishBlock(Hasher* hasher, uint64_t filled,
                              absl::Span<uint8_t> out) const {
  if (filled < block_size_) UpdateZeros(hasher, block_size_ - filled);
  hasher->Finish(out);
}

void BlockHasher::HashBlock(absl::Span<const uint8_t> block,
                            absl::Span<uint8_t> out) const {
  block = block.first(std::min<size_t>(block.size(), block_size_));
  Hasher hasher = salted_;
  hasher.Update(block);
  FinishBlock(&hasher, block.size(), out);
}

}  // namespace verity
