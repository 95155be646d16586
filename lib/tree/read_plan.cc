// Implements the read planning on TreeGeometry's per-level spans.

#include "lib/tree/read_plan.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace verity {

absl::Status ValidateRange(uint64_t offset, std::optional<uint64_t> length) {
  if (length.has_value() && *length > UINT64_MAX - offset) {
    return absl::InvalidArgumentError(
        absl::StrCat("offset ", offset, " + length ", *length, " overflows"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ByteRange> CheckByteRange(uint64_t data_size, uint64_t offset,
                                         std::optional<uint64_t> length) {
  if (offset > data_size) {
    return absl::OutOfRangeError(absl::StrCat("offset ", offset,
                                              " is past the end of the ",
                                              data_size, "-byte blob"));
  }
  if (!length.has_value()) return ByteRange{offset, data_size};
  if (*length > data_size - offset) {
    return absl::OutOfRangeError(
        absl::StrCat("range [", offset, ", ", offset + *length,
                     ") is past the end of the ", data_size, "-byte blob"));
  }
  return ByteRange{offset, offset + *length};
}

BlockRange BlocksOf(const TreeGeometry& geometry, ByteRange bytes) {
  const uint64_t first = bytes.begin / geometry.block_size();
  if (bytes.empty()) return {first, first};
  return {first, DivRoundUp(bytes.end, geometry.block_size())};
}

bool FitsSmallRead(const TreeGeometry& geometry, ByteRange bytes) {
  return BlocksOf(geometry, bytes).size() <=
         kMaxSmallReadBytes / geometry.block_size();
}

ByteRange BytesOf(const TreeGeometry& geometry, BlockRange blocks) {
  const uint64_t bs = geometry.block_size();
  const uint64_t size = geometry.data_size();
  return {std::min(blocks.first * bs, size), std::min(blocks.end * bs, size)};
}

std::vector<TreeBlockId> TreeBlocksFor(const TreeGeometry& geometry,
                                       BlockRange blocks) {
  std::vector<TreeBlockId> ids;
  for (const TreeBlockSpan& span :
       geometry.CoveringTreeBlocks(blocks.first, blocks.end)) {
    for (uint64_t i = span.first; i <= span.last; ++i) {
      ids.push_back({span.level, i});
    }
  }
  return ids;
}

bool Authenticates(const TreeGeometry& geometry, TreeBlockId id,
                   BlockRange blocks) {
  for (const TreeBlockSpan& span :
       geometry.CoveringTreeBlocks(blocks.first, blocks.end)) {
    if (span.level == id.level) {
      return id.index >= span.first && id.index <= span.last;
    }
  }
  return false;
}

ProofPlanner::ProofPlanner(const TreeGeometry& geometry,
                           absl::flat_hash_set<uint64_t> held)
    : geometry_(geometry),
      held_(std::move(held)),
      next_unsent_(geometry.num_levels(), 0) {}

ProofPlanner ProofPlanner::HoldingAll(const TreeGeometry& geometry) {
  ProofPlanner planner(geometry);
  planner.holds_all_ = true;
  return planner;
}

std::vector<TreeBlockId> ProofPlanner::ForChunk(BlockRange blocks) {
  std::vector<TreeBlockId> ids;
  if (holds_all_) return ids;
  for (const TreeBlockSpan& span :
       geometry_.CoveringTreeBlocks(blocks.first, blocks.end)) {
    uint64_t& next = next_unsent_[span.level];
    for (uint64_t i = std::max(next, span.first); i <= span.last; ++i) {
      const TreeBlockId id{span.level, i};
      if (!held_.contains(geometry_.Ordinal(id))) ids.push_back(id);
    }
    next = std::max(next, span.last + 1);
  }
  return ids;
}

}  // namespace verity
