// dm-verity hash trees, byte-exact with `veritysetup format` (cryptsetup's
// lib/verity/verity_hash.c): the parameters, the hash area's shape, a
// streaming builder on the same hashing as fs-verity trees (BlockHasher,
// DataHasher, LevelCascade), and the optional 512-byte superblock.
//
// A block's digest is H(salt ‖ block) (format 1) or H(block ‖ salt) (format
// 0, Chrome OS), the salt as it is. Digests fill hash blocks back to back
// (SHA-256 and SHA-512 digests are powers of two, so format 1's slots and
// format 0's packing agree), the rest of a block zero; levels are stored top
// first; the root hash is the digest of the top hash block, or of the only
// data block. A trailing partial data block is not covered.

#ifndef VERITYD_LIB_TREE_DM_VERITY_H_
#define VERITYD_LIB_TREE_DM_VERITY_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/hash/hash.h"
#include "lib/tree/block_hasher.h"
#include "lib/tree/data_hasher.h"
#include "lib/tree/level_cascade.h"
#include "lib/tree/merkle_params.h"

namespace verity {

// The superblock's size on disk; the hash area starts at the next hash
// block boundary.
inline constexpr size_t kDmVeritySuperblockSize = 512;

// Plain value; copy freely. The defaults are veritysetup's, but for the salt,
// which veritysetup makes random unless told.
struct DmVerityParams {
  HashAlgorithm algorithm = HashAlgorithm::kSha256;
  uint32_t data_block_size = 4096;
  uint32_t hash_block_size = 4096;
  // As it is, at most kMaxDmVeritySaltSize bytes; empty for none.
  std::string salt;
  // 1, or 0 for Chrome OS's format (the salt after the block).
  int format = 1;
};

// INVALID_ARGUMENT, naming the bad field, unless veritysetup accepts `params`.
absl::Status ValidateDmVerityParams(const DmVerityParams& params);

// The dm-verity trees verityd stores and serves are MerkleParams trees of
// format kDmVerity: format 1 with equal data and hash block sizes. The params
// of such a tree; INVALID_ARGUMENT for others (format 0, unequal sizes),
// saying so.
absl::StatusOr<MerkleParams> MerkleParamsOf(const DmVerityParams& params);
// The inverse; `params` must be of format kDmVerity.
DmVerityParams DmVerityParamsOf(const MerkleParams& params);

// The hash area's shape for `data_blocks` data blocks. Plain value.
struct DmVerityLayout {
  uint64_t data_blocks = 0;
  // Hash blocks per level; level 0 holds the digests of the data blocks.
  // Empty for one data block (its digest is the root hash).
  std::vector<uint64_t> level_blocks;

  uint64_t hash_blocks() const;
  // Where `level` starts in the hash area, in hash blocks (top level first).
  uint64_t LevelStart(int level) const;
};

// INVALID_ARGUMENT for invalid params or no data block (veritysetup refuses
// a device smaller than one).
absl::StatusOr<DmVerityLayout> MakeDmVerityLayout(const DmVerityParams& params,
                                                  uint64_t data_blocks);

struct DmVerityTree {
  DmVerityLayout layout;
  std::string root_hash;  // raw digest
  // The hash area: levels top first, each of whole hash blocks. What
  // `veritysetup format --no-superblock` writes.
  std::string hash_area;
};

// Builds a tree from data streamed in chunks of any size. Thread-compatible;
// neither copyable nor movable (members point at each other).
class DmVerityBuilder {
 public:
  // Invalid params are reported by Update() and Finish().
  explicit DmVerityBuilder(const DmVerityParams& params);
  DmVerityBuilder(const DmVerityBuilder&) = delete;
  DmVerityBuilder& operator=(const DmVerityBuilder&) = delete;

  // A hint: the data will be about `data_size` bytes, so the hash area is
  // allocated once.
  void Reserve(uint64_t data_size);
  absl::Status Update(absl::Span<const uint8_t> data);
  // Covers the whole data blocks given (a partial last one is left out).
  // Call at most once.
  absl::StatusOr<DmVerityTree> Finish();

 private:
  const DmVerityParams params_;
  const absl::Status params_status_;
  const BlockHasher data_hasher_;
  const BlockHasher hash_hasher_;
  DataHasher data_;
  LevelCascade levels_;
  bool finished_ = false;
};

// The superblock: "verity\0\0", version 1, the format, `uuid`, the algorithm's
// name, both block sizes, the data blocks and the salt, little-endian, zero
// padded to kDmVeritySuperblockSize bytes. It does not hold the root hash.
using Uuid = std::array<uint8_t, 16>;
std::string EncodeDmVeritySuperblock(const DmVerityParams& params,
                                     uint64_t data_blocks, const Uuid& uuid);

struct DmVeritySuperblock {
  DmVerityParams params;
  uint64_t data_blocks = 0;
  Uuid uuid{};
};
// INVALID_ARGUMENT unless `bytes` starts with a superblock of valid params.
absl::StatusOr<DmVeritySuperblock> ParseDmVeritySuperblock(
    absl::Span<const uint8_t> bytes);

// A UUID as veritysetup prints and takes it: 8-4-4-4-12 lower-case hex.
std::string FormatUuid(const Uuid& uuid);
absl::StatusOr<Uuid> ParseUuid(absl::string_view text);

}  // namespace verity

#endif  // VERITYD_LIB_TREE_DM_VERITY_H_
