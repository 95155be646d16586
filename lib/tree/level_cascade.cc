// Implements LevelCascade.

#include "lib/tree/level_cascade.h"

#include "lib/hash/hash.h"
#include "lib/tree/merkle_params.h"

namespace verity {

LevelCascade::LevelCascade(const BlockHasher* block_hasher)
    : block_hasher_(*block_hasher) {}

void LevelCascade::Reserve(uint64_t data_blocks) {
  const uint32_t block_size = block_hasher_.block_size();
  const uint64_t per_block = block_size / block_hasher_.digest_size();
  reserved_.clear();
  for (uint64_t blocks = data_blocks; blocks > 1;) {
    blocks = DivRoundUp(blocks, per_block);  // this level's hash blocks
    reserved_.push_back(blocks * block_size);
  }
}

void LevelCascade::AppendDataHashes(absl::string_view digests) {
  if (!digests.empty()) Append(0, digests);
}

uint64_t LevelCascade::BlockCount(size_t level) const {
  const uint64_t size = levels_[level].size();
  const uint32_t block_size = block_hasher_.block_size();
  return size / block_size + (size % block_size != 0);
}

void LevelCascade::Append(size_t level, absl::string_view digests) {
  if (level == levels_.size()) {
    levels_.emplace_back();
    if (level < reserved_.size()) levels_.back().reserve(reserved_[level]);
    hashed_blocks_.push_back(0);
  }
  levels_[level].append(digests.data(), digests.size());
  CascadeFullBlocks(level);
}

void LevelCascade::CascadeFullBlocks(size_t level) {
  const uint32_t block_size = block_hasher_.block_size();
  uint8_t digest[kMaxDigestSize];
  const absl::Span<uint8_t> out(digest, block_hasher_.digest_size());
  // Re-index levels_ every time: Append may grow the vector.
  while ((hashed_blocks_[level] + 1) * block_size <= levels_[level].size()) {
    const absl::string_view block =
        absl::string_view(levels_[level])
            .substr(hashed_blocks_[level] * block_size, block_size);
    block_hasher_.HashBlock(AsBytes(block), out);
    ++hashed_blocks_[level];
    Append(level + 1,
           absl::string_view(reinterpret_cast<char*>(digest), out.size()));
  }
}

size_t LevelCascade::CloseLevels() {
  for (size_t level = 0;; ++level) {
    levels_[level].resize(BlockCount(level) * block_hasher_.block_size(), '\0');
    if (BlockCount(level) <= 1) return level;
    CascadeFullBlocks(level);  // hashes the just-padded last block
  }
}

std::string LevelCascade::SerializeLevels(size_t top) const {
  size_t size = 0;
  for (size_t level = 0; level <= top; ++level) size += levels_[level].size();
  std::string tree;
  tree.reserve(size);
  for (size_t level = top + 1; level-- > 0;) tree += levels_[level];
  return tree;
}

LevelCascade::Result LevelCascade::Finish() {
  Result result;
  result.root_hash.assign(block_hasher_.digest_size(), '\0');
  if (levels_.empty()) return result;  // empty file
  if (levels_[0].size() == block_hasher_.digest_size()) {
    // One data block: its hash is the root and there is no tree.
    result.root_hash = levels_[0];
  } else {
    const size_t top = CloseLevels();
    block_hasher_.HashBlock(AsBytes(levels_[top]),
                            AsMutableBytes(&result.root_hash));
    result.tree = SerializeLevels(top);
  }
  levels_.clear();
  hashed_blocks_.clear();
  return result;
}

}  // namespace verity
