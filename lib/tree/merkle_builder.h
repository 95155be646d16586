// Builds fs-verity Merkle trees byte-identical to what `fsverity digest
// --out-merkle-tree` writes: streaming, or in parallel from random access.

#ifndef VERITYD_LIB_TREE_MERKLE_BUILDER_H_
#define VERITYD_LIB_TREE_MERKLE_BUILDER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/tree/block_hasher.h"
#include "lib/tree/data_hasher.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/level_cascade.h"
#include "lib/tree/merkle_params.h"

namespace verity {

// A finished tree. Plain value.
struct MerkleTree {
  Descriptor descriptor;
  // Levels top first, each padded to whole blocks; empty when the data fits
  // in one block (the root hash is then that block's hash).
  std::string tree;
  // Raw file digest (the hash of the serialized descriptor); FormatDigest
  // gives the text `fsverity digest` prints.
  std::string digest;
};

// Builds a tree from data streamed in chunks of any size; the total size
// need not be known in advance. Memory is the output plus O(1).
// Thread-compatible. Neither copyable nor movable: members point at each
// other.
class MerkleBuilder {
 public:
  // Invalid params are reported by the first Update() or Finish().
  explicit MerkleBuilder(const MerkleParams& params);
  MerkleBuilder(const MerkleBuilder&) = delete;
  MerkleBuilder& operator=(const MerkleBuilder&) = delete;

  // INVALID_ARGUMENT for invalid params or once the data would exceed
  // kMaxDataSize; FAILED_PRECONDITION after Finish().
  absl::Status Update(absl::Span<const uint8_t> data);

  // Completes the tree. Call at most once.
  absl::StatusOr<MerkleTree> Finish();

 private:
  void DrainDataHashes();

  const MerkleParams params_;
  const absl::Status params_status_;
  bool finished_ = false;
  const BlockHasher block_hasher_;
  DataHasher data_;
  LevelCascade levels_;
};

// The tree of `data`, all of it at hand: MerkleBuilder's Update and Finish.
absl::StatusOr<MerkleTree> BuildMerkleTree(const MerkleParams& params,
                                           absl::Span<const uint8_t> data);

// Fills all of `out` with the data at `offset`, or fails. Must be safe to
// call from several threads at once (pread is).
using ReadAtFn =
    std::function<absl::Status(uint64_t offset, absl::Span<uint8_t> out)>;

// Builds the tree of `data_size` bytes read through `read_at`, hashing
// `threads` contiguous ranges of data blocks concurrently (the calling
// thread runs one of them). threads <= 1 reads and hashes on the calling
// thread only. Returns the first error `read_at` returns.
absl::StatusOr<MerkleTree> BuildMerkleTreeParallel(const MerkleParams& params,
                                                   uint64_t data_size,
                                                   const ReadAtFn& read_at,
                                                   int threads);

}  // namespace verity

#endif  // VERITYD_LIB_TREE_MERKLE_BUILDER_H_
