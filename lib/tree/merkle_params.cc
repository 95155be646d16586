// Validates Merkle parameters and computes the tree layout for a data size.

#include "lib/tree/merkle_params.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace verity {
namespace {

HashLocation RootLocation() {
  HashLocation location;
  location.is_root = true;
  return location;
}

bool IsPowerOfTwo(uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

uint8_t Log2(uint32_t power_of_two) {
  uint8_t log = 0;
  while ((uint32_t{1} << log) < power_of_two) ++log;
  return log;
}

absl::Status ValidateBlockSize(HashAlgorithm algorithm, uint32_t block_size) {
  if (!IsPowerOfTwo(block_size)) {
    return absl::InvalidArgumentError(
        absl::StrCat("block size ", block_size, " is not a power of two"));
  }
  // A block must hold at least two hashes or the tree would never shrink.
  const size_t min_size = 2 * DigestSize(algorithm);
  if (block_size < min_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "block size ", block_size, " is too small for ",
        HashAlgorithmName(algorithm), " (minimum ", min_size, ")"));
  }
  if (block_size > kMaxBlockSize) {
    return absl::InvalidArgumentError(absl::StrCat("block size ", block_size,
                                                   " is too large (maximum ",
                                                   kMaxBlockSize, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateMerkleParams(const MerkleParams& params) {
  const uint8_t algorithm = static_cast<uint8_t>(params.hash_algorithm);
  if (!IsValidHashAlgorithm(algorithm)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported hash algorithm number ", algorithm));
  }
  RETURN_IF_ERROR(ValidateBlockSize(params.hash_algorithm, params.block_size));
  const bool dm_verity = params.format == TreeFormat::kDmVerity;
  if (!dm_verity && params.format != TreeFormat::kFsVerity) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown tree format ", static_cast<int>(params.format)));
  }
  if (dm_verity && (params.block_size < kMinDmVerityBlockSize ||
                    params.block_size > kMaxDmVerityBlockSize)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a dm-verity block is ", kMinDmVerityBlockSize, " to ",
                     kMaxDmVerityBlockSize, " bytes, not ", params.block_size));
  }
  const size_t max_salt = dm_verity ? kMaxDmVeritySaltSize : kMaxSaltSize;
  if (params.salt.size() > max_salt) {
    return absl::InvalidArgumentError(
        absl::StrCat("salt is ", params.salt.size(), " bytes long (maximum ",
                     max_salt, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TreeGeometry> TreeGeometry::Create(const MerkleParams& params,
                                                  uint64_t data_size) {
  RETURN_IF_ERROR(ValidateMerkleParams(params));
  if (data_size > kMaxDataSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data size ", data_size, " is too large (maximum ", kMaxDataSize, ")"));
  }
  if (params.format == TreeFormat::kDmVerity &&
      (data_size == 0 || data_size % params.block_size != 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("dm-verity covers whole data blocks: ", data_size,
                     " bytes is not a positive multiple of the block size ",
                     params.block_size));
  }
  TreeGeometry g;
  g.data_size_ = data_size;
  g.block_size_ = params.block_size;
  g.log_block_size_ = Log2(params.block_size);
  g.digest_size_ = static_cast<uint32_t>(DigestSize(params.hash_algorithm));
  g.data_block_count_ = DivRoundUp(data_size, g.block_size_);
  // Each level hashes the one below it until a single block remains.
  for (uint64_t blocks = g.data_block_count_; blocks > 1;) {
    if (g.num_levels_ == kMaxLevels) {
      return absl::InvalidArgumentError("Merkle tree would be too deep");
    }
    blocks = DivRoundUp(blocks, g.hashes_per_block());
    g.level_blocks_[g.num_levels_++] = blocks;
  }
  // The serialized tree stores the top level first.
  uint64_t offset = 0;
  for (int level = g.num_levels_ - 1; level >= 0; --level) {
    g.level_offsets_[level] = offset;
    uint64_t bytes;
    if (__builtin_mul_overflow(g.level_blocks_[level], g.block_size_, &bytes) ||
        __builtin_add_overflow(offset, bytes, &offset)) {
      return absl::InvalidArgumentError("Merkle tree size overflows");
    }
  }
  g.tree_size_ = offset;
  return g;
}

uint64_t TreeGeometry::level_block_count(int level) const {
  if (level < 0 || level >= num_levels_) return 0;
  return level_blocks_[level];
}

uint64_t TreeGeometry::level_offset(int level) const {
  if (level < 0 || level >= num_levels_) return 0;
  return level_offsets_[level];
}

HashLocation TreeGeometry::SlotIn(int level, uint64_t child_index) const {
  HashLocation location;
  location.level = level;
  location.block_index = child_index / hashes_per_block();
  location.slot = static_cast<uint32_t>(child_index % hashes_per_block());
  location.tree_offset = level_offsets_[level] +
                         location.block_index * block_size_ +
                         uint64_t{location.slot} * digest_size_;
  return location;
}

absl::StatusOr<HashLocation> TreeGeometry::DataBlockHashLocation(
    uint64_t index) const {
  if (index >= data_block_count_) {
    return absl::OutOfRangeError(absl::StrCat("data block ", index,
                                              " is past the last block (",
                                              data_block_count_, " blocks)"));
  }
  if (num_levels_ == 0) return RootLocation();
  return SlotIn(0, index);
}

absl::StatusOr<HashLocation> TreeGeometry::TreeBlockHashLocation(
    int level, uint64_t index) const {
  if (index >= level_block_count(level)) {
    return absl::OutOfRangeError(
        absl::StrCat("tree level ", level, " has no block ", index));
  }
  if (level == num_levels_ - 1) return RootLocation();
  return SlotIn(level + 1, index);
}

bool TreeGeometry::Contains(TreeBlockId id) const {
  return id.index < level_block_count(id.level);
}

uint64_t TreeGeometry::Ordinal(TreeBlockId id) const {
  return level_offset(id.level) / block_size_ + id.index;
}

absl::StatusOr<TreeBlockId> TreeGeometry::BlockAtOrdinal(
    uint64_t ordinal) const {
  // Levels are stored top first, so the top level holds the lowest ordinals.
  for (int level = num_levels_ - 1; level >= 0; --level) {
    const uint64_t first = level_offsets_[level] / block_size_;
    if (ordinal < first + level_blocks_[level]) {
      return TreeBlockId{level, ordinal - first};
    }
  }
  return absl::OutOfRangeError(
      absl::StrCat("tree block ", ordinal, " is past the end of the ",
                   tree_size_ / block_size_, "-block tree"));
}

std::vector<TreeBlockSpan> TreeGeometry::CoveringTreeBlocks(
    uint64_t first_block, uint64_t end_block) const {
  end_block = std::min(end_block, data_block_count_);
  if (first_block >= end_block) return {};
  std::vector<TreeBlockSpan> spans(num_levels_);
  uint64_t first = first_block, last = end_block - 1;
  for (int level = 0; level < num_levels_; ++level) {
    first /= hashes_per_block();
    last /= hashes_per_block();
    spans[num_levels_ - 1 - level] = {level, first, last};
  }
  return spans;
}

}  // namespace verity
