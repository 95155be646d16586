// Merkle tree parameters and the shape (levels, sizes, offsets) of the
// fs-verity tree they give for a file of a given size.

#ifndef VERITYD_LIB_TREE_MERKLE_PARAMS_H_
#define VERITYD_LIB_TREE_MERKLE_PARAMS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/hash/hash.h"

namespace verity {

// fs-verity stores the salt in a 32-byte descriptor field.
inline constexpr size_t kMaxSaltSize = 32;
// The longest salt dm-verity takes, and veritysetup's bounds on its block
// sizes.
inline constexpr size_t kMaxDmVeritySaltSize = 256;
inline constexpr uint32_t kMinDmVerityBlockSize = 512;
inline constexpr uint32_t kMaxDmVerityBlockSize = 512 << 10;
// The largest block size `fsverity digest` accepts. Kernels only enable
// verity with blocks up to the page size; callers serving untrusted requests
// should apply a tighter limit, since the tree pads its top block to this.
inline constexpr uint32_t kMaxBlockSize = uint32_t{1} << 30;
// The block sizes verityd stores and serves: at least 1 KiB keeps a Put's
// in-memory tree small, and kernels verify blocks no larger than the page size
// (64 KiB at most).
inline constexpr uint32_t kMinServedBlockSize = 1024;
inline constexpr uint32_t kMaxServedBlockSize = 65536;
// File sizes are signed 64-bit (off_t); larger sizes are rejected, which
// also keeps every tree size and offset below 2^64.
inline constexpr uint64_t kMaxDataSize = (uint64_t{1} << 63) - 1;
// Enough for the deepest valid tree (2 hashes per block, 2^63-byte file).
inline constexpr int kMaxLevels = 64;

// n / d rounded up; `d` must not be 0.
inline constexpr uint64_t DivRoundUp(uint64_t n, uint64_t d) {
  return n / d + (n % d != 0);
}

// Which Linux verity format a tree follows. With equal data and hash block
// sizes, dm-verity's format 1 hash tree has fs-verity's shape (digests in
// power-of-two slots, levels top first, the root the digest of the top block
// or of the only data block); they differ in the salt (fs-verity pads it to
// the hash's unit, dm-verity prepends it as it is), in what the blob's digest
// commits to (Descriptor), and dm-verity covers whole data blocks only.
enum class TreeFormat : uint8_t {
  kFsVerity = 0,
  kDmVerity = 1,
};

// Parameters of a Merkle tree. Plain value; copy freely.
struct MerkleParams {
  // The fs-verity default, and the only one every kernel supports.
  HashAlgorithm hash_algorithm = HashAlgorithm::kSha256;
  // A power of two in [2 * digest size, kMaxBlockSize]. 4096 matches the
  // page size of most systems, which kernels require for enabling verity.
  uint32_t block_size = 4096;
  // Empty for an unsalted tree; at most kMaxSaltSize bytes (fs-verity) or
  // kMaxDmVeritySaltSize (dm-verity).
  std::string salt;
  TreeFormat format = TreeFormat::kFsVerity;
};

// Returns INVALID_ARGUMENT, naming the bad field, if `params` cannot
// describe a tree of its format (dm-verity: blocks of at least 512 bytes).
absl::Status ValidateMerkleParams(const MerkleParams& params);

// Where the hash that authenticates a block is stored.
struct HashLocation {
  // True if the hash is the root hash, kept in the descriptor rather than
  // the tree; the other fields are then zero.
  bool is_root = false;
  int level = 0;             // tree level holding the hash (0 = lowest)
  uint64_t block_index = 0;  // block within that level
  uint32_t slot = 0;         // index of the hash within that block
  uint64_t tree_offset = 0;  // byte offset of the hash in the serialized tree
};

// A block of the serialized tree: `index` counts blocks within tree level
// `level` (0 = lowest).
struct TreeBlockId {
  int level = 0;
  uint64_t index = 0;

  friend bool operator==(const TreeBlockId& a, const TreeBlockId& b) {
    return a.level == b.level && a.index == b.index;
  }
};

// The blocks [first, last] of one tree level.
struct TreeBlockSpan {
  int level = 0;
  uint64_t first = 0;
  uint64_t last = 0;
};

// The layout of the tree for given params and data size. Level 0 is the
// lowest tree level (hashes of data blocks); the serialized tree stores the
// levels top first. Immutable value; thread-safe.
class TreeGeometry {
 public:
  // Returns INVALID_ARGUMENT for invalid params or data_size > kMaxDataSize,
  // and for a dm-verity tree unless the data is whole blocks, at least one.
  static absl::StatusOr<TreeGeometry> Create(const MerkleParams& params,
                                             uint64_t data_size);

  uint64_t data_size() const { return data_size_; }
  uint32_t block_size() const { return block_size_; }
  uint8_t log_block_size() const { return log_block_size_; }
  uint32_t digest_size() const { return digest_size_; }
  uint32_t hashes_per_block() const { return block_size_ / digest_size_; }
  uint64_t data_block_count() const { return data_block_count_; }
  // 0 when the data fits in one block: its hash is then the root hash.
  int num_levels() const { return num_levels_; }
  // Both return 0 for a level outside [0, num_levels()).
  uint64_t level_block_count(int level) const;
  uint64_t level_offset(int level) const;
  uint64_t tree_size() const { return tree_size_; }

  // OUT_OF_RANGE if `index` >= data_block_count().
  absl::StatusOr<HashLocation> DataBlockHashLocation(uint64_t index) const;
  // The parent slot of tree block `index` of `level`; OUT_OF_RANGE if there
  // is no such block. The top level's single block hashes to the root.
  absl::StatusOr<HashLocation> TreeBlockHashLocation(int level,
                                                     uint64_t index) const;

  // True if `id` names a block of this tree.
  bool Contains(TreeBlockId id) const;
  // A block's position in the serialized tree, counted in blocks (its byte
  // offset / block_size). `id` must be Contains()ed.
  uint64_t Ordinal(TreeBlockId id) const;
  // The inverse of Ordinal(); OUT_OF_RANGE past the end of the tree.
  absl::StatusOr<TreeBlockId> BlockAtOrdinal(uint64_t ordinal) const;
  // The tree blocks that authenticate data blocks [first_block, end_block),
  // one span per level, top level first: the order they must be verified in.
  // Empty if the range is empty or past the data.
  std::vector<TreeBlockSpan> CoveringTreeBlocks(uint64_t first_block,
                                                uint64_t end_block) const;

 private:
  TreeGeometry() = default;
  HashLocation SlotIn(int level, uint64_t child_index) const;

  uint64_t data_size_ = 0;
  uint32_t block_size_ = 0;
  uint8_t log_block_size_ = 0;
  uint32_t digest_size_ = 0;
  uint64_t data_block_count_ = 0;
  int num_levels_ = 0;
  std::array<uint64_t, kMaxLevels> level_blocks_{};
  std::array<uint64_t, kMaxLevels> level_offsets_{};
  uint64_t tree_size_ = 0;
};

}  // namespace verity

#endif  // VERITYD_LIB_TREE_MERKLE_PARAMS_H_
