// Hashes the blocks of a verity tree, salted the fs-verity way (salt padded,
// block zero-padded) or either dm-verity way (raw salt before or after the
// block). Shared by every path that builds or checks a tree. Whole SHA-256
// blocks go two at a time through interleaved SHA-NI rounds where the CPU has
// them (sha256_x2.h), as the kernel's fs-verity does; whole SHA-512 blocks
// four at a time through AVX2 lanes (sha512_x4.h).

#ifndef VERITYD_LIB_TREE_BLOCK_HASHER_H_
#define VERITYD_LIB_TREE_BLOCK_HASHER_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/base/byte_chain.h"
#include "lib/hash/hash.h"
#include "lib/hash/sha256_x2.h"
#include "lib/hash/sha512_x4.h"
#include "lib/tree/merkle_params.h"

namespace verity {

// Where a block's digest takes the salt.
enum class SaltPlacement {
  // fs-verity: H(salt zero-padded to the hash's unit ‖ block zero-padded to
  // the block size).
  kFsVerity,
  // dm-verity format 1: H(salt ‖ block), the salt as it is.
  kBefore,
  // dm-verity format 0 (Chrome OS): H(block ‖ salt).
  kAfter,
};

// Immutable after construction, so one instance may be shared by threads.
class BlockHasher {
 public:
  // The hashing of `params.format` (kFsVerity, or kBefore for dm-verity);
  // `params` must pass ValidateMerkleParams.
  explicit BlockHasher(const MerkleParams& params);
  // Any placement. `block_size` must be a power of two of at least 512 (and
  // at least 2 digests); `salt` at most kMaxDmVeritySaltSize bytes. Only
  // kFsVerity hashes short blocks (zero-padded); the others take whole ones.
  BlockHasher(HashAlgorithm algorithm, uint32_t block_size,
              absl::string_view salt, SaltPlacement placement);

  uint32_t block_size() const { return block_size_; }
  size_t digest_size() const { return salted_.digest_size(); }

  // A hasher positioned at the start of a block (after the salt). Cheap: the
  // salt was hashed once, in the constructor, and this copies that state.
  Hasher Begin() const { return salted_; }

  // Completes a block begun with Begin() into which `filled` <= block_size()
  // bytes were fed (less only for kFsVerity: the zero padding is fed) and
  // the salt if it goes after; writes the digest to `out`.
  void FinishBlock(Hasher* hasher, uint64_t filled,
                   absl::Span<uint8_t> out) const;

  // Hashes `block` (at most block_size() bytes; extra bytes are ignored),
  // zero-padded to block_size().
  void HashBlock(absl::Span<const uint8_t> block,
                 absl::Span<uint8_t> out) const;

  // Hashes the blocks laid out back to back in `data`, the last one possibly
  // short (zero-padded), writing their digests back to back to `out`, which
  // must hold one per block.
  void HashBlocks(absl::Span<const uint8_t> data,
                  absl::Span<uint8_t> out) const;

  // The same for blocks laid out back to back across the pieces of `data`,
  // hashed where they are, wherever the pieces end: SHA-256 blocks two at a
  // time with SHA-NI, each fed in runs of whole 64-byte units (a unit split
  // between pieces is copied, 64 bytes); otherwise the whole blocks inside a
  // piece as above, and a block that spans pieces through one hasher, piece
  // by piece.
  void HashBlocks(const ByteChain& data, absl::Span<uint8_t> out) const;

  // Hashes two whole blocks, wherever each is.
  void HashTwoBlocks(const uint8_t* a, const uint8_t* b, uint8_t* digest_a,
                     uint8_t* digest_b) const;

 private:
  // How many whole blocks one multi-buffer call hashes: 2 for SHA-256 with
  // SHA-NI, 4 for SHA-512 with AVX2, else 1 (BoringSSL, one at a time).
  size_t Lanes() const;
  // Hashes the next whole block of `a` and that of `b` with SHA-NI,
  // consuming them.
  void HashTwoBlocks(ByteChain::Reader& a, ByteChain::Reader& b,
                     uint8_t* digest_a, uint8_t* digest_b) const;
  // The whole blocks of `data` hashed piece by piece (see HashBlocks).
  void HashPieces(const ByteChain& data, absl::Span<uint8_t> out) const;
  // Hashes `count` (1 to 4) consecutive whole SHA-512 blocks at `data` in
  // the four AVX2 lanes.
  void HashSha512Blocks(const uint8_t* data, size_t count,
                        uint8_t* digests) const;

  uint32_t block_size_;
  HashAlgorithm algorithm_;
  // The bytes hashed before the block and after it: the salt, padded for
  // kFsVerity; empty where there is none.
  std::string prefix_;
  std::string suffix_;
  // The hasher after prefix_.
  Hasher salted_;
  // For the multi-buffer kernels, which take whole units (64 bytes for
  // SHA-256, 128 for SHA-512): the state after the whole units of prefix_,
  // the prefix's remaining bytes (`head_`, before the block), and what
  // follows the block up to the last unit: suffix_, 0x80, zeros and the
  // message length in bits (`tail_`).
  Sha256State prefix_sha256_;
  Sha512State prefix_sha512_;
  std::string head_;
  std::string tail_;
};

}  // namespace verity

#endif  // VERITYD_LIB_TREE_BLOCK_HASHER_H_
