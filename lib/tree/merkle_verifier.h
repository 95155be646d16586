// Verification primitives shared by the server (checking its own store) and the
// client (checking what the server sent): tree blocks top-down from a trusted
// digest, then data blocks.

#ifndef VERITYD_LIB_TREE_MERKLE_VERIFIER_H_
#define VERITYD_LIB_TREE_MERKLE_VERIFIER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/base/byte_chain.h"
#include "lib/tree/block_hasher.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"

namespace verity {

// Limits applied to descriptors from untrusted sources, before any memory is
// committed.
struct VerifierOptions {
  // Kernels verify with blocks up to the page size; fs-verity tools allow 64
  // KiB pages. A larger block would let a peer make us hash and buffer huge
  // blocks.
  uint32_t max_block_size = 65536;
};

// Holds the root of trust for one blob and the tree blocks verified so far.
//
// Every status about supplied content is DATA_LOSS: a descriptor that does not
// hash to the trusted digest, a block of the wrong length or position, a tree
// block whose parent has not been verified, a hash mismatch. INVALID_ARGUMENT
// means the caller's own input (the trusted digest, a block range) is
// malformed, or the descriptor asks for parameters beyond `options`.
//
// Thread-compatible: const methods may run concurrently with each other, but
// not with AddTreeBlock(). Memory grows with the verified tree blocks, at most
// the tree's size (about data_size * digest_size / block_size).
class MerkleVerifier {
 public:
  static absl::StatusOr<MerkleVerifier> Create(
      const Descriptor& descriptor, const ParsedDigest& trusted_digest,
      const VerifierOptions& options = {});

  const Descriptor& descriptor() const { return descriptor_; }
  const TreeGeometry& geometry() const { return geometry_; }
  const MerkleParams& params() const { return params_; }

  // The tree blocks that authenticate data blocks [first_block, end_block) and
  // are not yet verified, parents before children (the order AddTreeBlock
  // needs). INVALID_ARGUMENT if the range is empty or outside the data.
  absl::StatusOr<std::vector<TreeBlockId>> MissingTreeBlocks(
      uint64_t first_block, uint64_t end_block) const;

  bool IsTreeBlockVerified(TreeBlockId id) const;

  // Verifies `block` (block_size bytes) as tree block `id` against its parent,
  // which must have been verified already (the root hash for the top level),
  // and caches it. Adding a block that is already verified only checks that the
  // bytes are the same.
  absl::Status AddTreeBlock(TreeBlockId id, absl::Span<const uint8_t> block);

  // A verified tree block's bytes; NOT_FOUND if it has not been verified.
  absl::StatusOr<absl::Span<const uint8_t>> VerifiedTreeBlock(
      TreeBlockId id) const;

  // Verifies data block `index`: block_size bytes, or the remainder for the
  // last block. The level-0 tree block holding its hash must have been
  // verified.
  absl::Status VerifyDataBlock(uint64_t index,
                               absl::Span<const uint8_t> data) const;

  // Verifies consecutive data blocks starting at block `first_block`; `data`
  // ends on a block boundary or at the end of the blob.
  absl::Status VerifyDataBlocks(uint64_t first_block,
                                absl::Span<const uint8_t> data) const;
  // The same for data held in pieces.
  absl::Status VerifyDataBlocks(uint64_t first_block,
                                const ByteChain& data) const;

 private:
  MerkleVerifier(const Descriptor& descriptor, const MerkleParams& params,
                 const TreeGeometry& geometry)
      : descriptor_(descriptor),
        params_(params),
        geometry_(geometry),
        hasher_(params) {}

  // Checks `block` against the hash stored at `location` (a verified parent or
  // the root). `what` names the block in an error, and runs only then.
  absl::Status CheckHash(const HashLocation& location,
                         absl::Span<const uint8_t> block,
                         absl::FunctionRef<std::string()> what) const;
  // Checks a digest already computed against the hash at `location`.
  absl::Status CheckDigest(const HashLocation& location,
                           absl::Span<const uint8_t> actual,
                           absl::FunctionRef<std::string()> what) const;
  uint64_t DataBlockLength(uint64_t index) const;
  // "data block N (offset M)", for errors.
  std::string DataBlockName(uint64_t index) const;

  Descriptor descriptor_;
  MerkleParams params_;
  TreeGeometry geometry_;
  BlockHasher hasher_;
  // Verified tree blocks, keyed by their ordinal in the serialized tree.
  absl::flat_hash_map<uint64_t, std::string> verified_;
};

// Verifies a whole blob: its serialized tree (top level first, as `fsverity
// digest
// --out-merkle-tree` writes it) and all of its data, against `trusted_digest`.
absl::Status VerifyBlob(const Descriptor& descriptor,
                        const ParsedDigest& trusted_digest,
                        absl::Span<const uint8_t> tree,
                        absl::Span<const uint8_t> data);

}  // namespace verity

#endif  // VERITYD_LIB_TREE_MERKLE_VERIFIER_H_
