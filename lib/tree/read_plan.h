// The arithmetic of a read, in one place: which data blocks a byte range
// covers, which tree blocks prove them, and which of those a stream must send
// with each chunk. The server's read path, the SDK's stream verifier and the
// test forgers all plan with it, so they cannot disagree.

#ifndef VERITYD_LIB_TREE_READ_PLAN_H_
#define VERITYD_LIB_TREE_READ_PLAN_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "lib/tree/merkle_params.h"

namespace verity {

// Bytes [begin, end) of a blob. Plain value.
struct ByteRange {
  uint64_t begin = 0;
  uint64_t end = 0;

  uint64_t size() const { return end - begin; }
  bool empty() const { return begin >= end; }
};

// Data blocks [first, end) of a blob. Plain value.
struct BlockRange {
  uint64_t first = 0;
  uint64_t end = 0;

  uint64_t size() const { return end - first; }
  bool empty() const { return first >= end; }
};

// How many held tree blocks a Read request may list (have_tree_blocks): the
// SDK lists at most this many, and the server refuses more by default
// (--max_have_tree_blocks). 64 Ki indexes are at most 640 KiB of request.
inline constexpr size_t kMaxHaveTreeBlocks = 65536;

// INVALID_ARGUMENT if offset + *length overflows: a range no blob can hold,
// malformed whatever the blob. Checked before CheckByteRange where a request
// names the range.
absl::Status ValidateRange(uint64_t offset, std::optional<uint64_t> length);

// The range [offset, offset + *length), or [offset, data_size) without a
// length, of a blob of `data_size` bytes; OUT_OF_RANGE unless it lies within
// the blob.
absl::StatusOr<ByteRange> CheckByteRange(uint64_t data_size, uint64_t offset,
                                         std::optional<uint64_t> length);

// The data blocks that hold `bytes`; for an empty range, the empty range at the
// block of its start.
BlockRange BlocksOf(const TreeGeometry& geometry, ByteRange bytes);

// The most data a ReadSmall call carries: the range rounded out to whole
// blocks (BlocksOf) must be no larger. 256 KiB is the Read stream's first
// chunk, so a small read costs the server what a stream's first message does.
inline constexpr uint64_t kMaxSmallReadBytes = 256 << 10;

// True if `bytes` of a blob of `geometry` can be read by one ReadSmall call.
bool FitsSmallRead(const TreeGeometry& geometry, ByteRange bytes);

// The bytes of data blocks `blocks`, the last one cut at the end of the data.
ByteRange BytesOf(const TreeGeometry& geometry, BlockRange blocks);

// Every tree block that authenticates a data block of `blocks`, top level
// first: the order to verify them in. Empty if `blocks` is empty or past the
// data.
std::vector<TreeBlockId> TreeBlocksFor(const TreeGeometry& geometry,
                                       BlockRange blocks);

// True if tree block `id` authenticates a data block of `blocks`.
bool Authenticates(const TreeGeometry& geometry, TreeBlockId id,
                   BlockRange blocks);

// Which tree blocks each chunk of one in-order stream must carry: those that
// authenticate it, that the reader did not hold at the start and that no
// earlier chunk carried. Thread-compatible value.
class ProofPlanner {
 public:
  // `held` are TreeBlock ordinals (TreeGeometry::Ordinal) the reader holds.
  ProofPlanner(const TreeGeometry& geometry,
               absl::flat_hash_set<uint64_t> held = {});

  // A reader holding the whole tree: chunks carry no tree blocks.
  static ProofPlanner HoldingAll(const TreeGeometry& geometry);

  // The tree blocks chunk `blocks` must carry, top level first. Chunks must
  // come in order: each starts at or after the start of the one before.
  std::vector<TreeBlockId> ForChunk(BlockRange blocks);

 private:
  TreeGeometry geometry_;
  absl::flat_hash_set<uint64_t> held_;
  bool holds_all_ = false;
  // Per level, the first block index not yet carried: chunks come in order,
  // so the blocks a chunk needs that were carried before lie below it.
  std::vector<uint64_t> next_unsent_;
};

}  // namespace verity

#endif  // VERITYD_LIB_TREE_READ_PLAN_H_
