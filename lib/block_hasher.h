// Hashes single fs-verity blocks: salted prefix, block data, zero padding.
// Shared by every path that builds or checks a tree.

#ifndef VERITYD_LIB_BLOCK_HASHER_H_
#define VERITYD_LIB_BLOCK_HASHER_H_

#include <cstdint>

#include "absl/types/span.h"
#include "lib/hash.h"
#include "lib/merkle_params.h"

namespace verity {

// Immutable after construction, so one instance may be shared by threads.
class BlockHasher {
 public:
  // `params` must pass ValidateMerkleParams.
  explicit BlockHasher(const MerkleParams& params);

  uint32_t block_size() const { return block_size_; }
  size_t digest_size() const { return salted_.digest_size(); }

  // A hasher positioned at the start of a block (after the salt). Cheap: the
  // salt was hashed once, in the constructor, and this copies that state.
  Hasher Begin() const { return salted_; }

  // Completes a block begun with Begin() into which `filled` <= block_size()
  // bytes were fed, by feeding the zero padding; writes the digest to `out`.
  void FinishBlock(Hasher* hasher, uint64_t filled,
                   absl::Span<uint8_t> out) const;

  // Hashes `block` (at most block_size() bytes; extra bytes are ignored),
  // zero-padded to block_size().
  void HashBlock(absl::Span<const uint8_t> block,
                 absl::Span<uint8_t> out) const;

 private:
  uint32_t block_size_;
  Hasher salted_;
};

}  // namespace verity

#endif  // VERITYD_LIB_BLOCK_HASHER_H_
