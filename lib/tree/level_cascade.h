// Builds the tree levels above the data as level-0 hashes arrive, the
// fsverity-utils way: each level's unfinished last block is its pending
// buffer, hashed into the level above the moment it fills.

#ifndef VERITYD_LIB_TREE_LEVEL_CASCADE_H_
#define VERITYD_LIB_TREE_LEVEL_CASCADE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "lib/tree/block_hasher.h"

namespace verity {

// Thread-compatible. Does not own the BlockHasher, which must outlive it.
// The whole tree is output, so each level is kept in full; its tail doubles
// as the pending buffer and memory beyond the output is O(1).
class LevelCascade {
 public:
  explicit LevelCascade(const BlockHasher* block_hasher);

  // Sizes the levels for `data_blocks` data blocks before they arrive, so
  // that a growing level is never copied. A hint: any number still works.
  void Reserve(uint64_t data_blocks);

  // Appends data-block digests (a whole number of them) to level 0.
  void AppendDataHashes(absl::string_view digests);

  struct Result {
    std::string tree;       // levels top first, each padded to whole blocks
    std::string root_hash;  // all zeros when there were no data blocks
  };
  // Pads and hashes the unfinished blocks and serializes the levels. Call
  // once; the cascade is empty afterwards.
  Result Finish();

 private:
  void Append(size_t level, absl::string_view digests);
  // Hashes the blocks of `level` that filled since the last call.
  void CascadeFullBlocks(size_t level);
  uint64_t BlockCount(size_t level) const;
  // Pads each level to whole blocks, hashing its last block upward, until a
  // level of a single block; returns that (top) level.
  size_t CloseLevels();
  // Concatenates levels [0, top], top first.
  std::string SerializeLevels(size_t top) const;

  const BlockHasher& block_hasher_;
  // levels_[i] holds tree level i; levels above the final top level may be
  // created by the eager cascade and are dropped by Finish().
  std::vector<std::string> levels_;
  // Number of leading blocks of each level already hashed into the next.
  std::vector<uint64_t> hashed_blocks_;
  // Bytes to reserve for each level as it is created (Reserve()).
  std::vector<uint64_t> reserved_;
};

}  // namespace verity

#endif  // VERITYD_LIB_TREE_LEVEL_CASCADE_H_
