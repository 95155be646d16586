// The server's check of its own store, as one unit: a blob kept open with its
// tree verified top-down from its digest, and every data block verified
// against that tree before it may be sent.

#ifndef VERITYD_SERVER_STORE_VERIFIED_BLOB_H_
#define VERITYD_SERVER_STORE_VERIFIED_BLOB_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/read_plan.h"
#include "lib/tree/verified_tree.h"
#include "server/store/store.h"

namespace verity::server {

// Thread-safe. Shares ownership of the open Blob, so it stays readable while in
// use even if the blob is deleted meanwhile. Memory: the verified tree blocks,
// at most the tree's size, and with verify_once a bit per data block.
class VerifiedBlob {
 public:
  // DATA_LOSS if the blob's descriptor does not hash to its digest. With
  // `verify_once` (dm-verity's check_at_most_once), a data block verified once
  // is remembered in a bitmap and not hashed again while this object lives:
  // for stores the operator trusts after the first read.
  static absl::StatusOr<std::shared_ptr<VerifiedBlob>> Create(
      std::shared_ptr<const Blob> blob, bool verify_once = false);

  const Blob& blob() const { return *blob_; }
  const ParsedDigest& digest() const { return blob_->digest(); }
  const TreeGeometry& geometry() const { return blob_->geometry(); }

  // The steps of a verified read, which a chunk of a Read (the dispatcher's
  // Chunk) takes in order, reading the bytes from blob() itself.

  // The tree blocks that data blocks [first_block, end_block) need and that
  // are not verified yet, top level first (the order AddTreeBlock() takes
  // them in); those of one level are consecutive.
  std::vector<TreeBlockId> MissingTree(uint64_t first_block,
                                       uint64_t end_block) const;
  // Verifies `bytes`, read from the store, as tree block `id` against its
  // parent, which must be verified, and keeps it (a block verified before is
  // compared with). DATA_LOSS naming the blob, marked as found in the tree
  // (IsTreeCorruption) and with the bad block (BadBlockOf).
  absl::Status AddTreeBlock(TreeBlockId id, absl::Span<const uint8_t> bytes);
  // The first block in [from, end) whose verification needs a tree block
  // not verified yet, or `end`.
  uint64_t VerifiableUpTo(uint64_t from, uint64_t end) const;
  // Verifies data blocks [*next, upto), whose bytes are in `data` (which
  // starts at block `first`), advancing *next past each block verified (or
  // remembered as verified, with verify_once). DATA_LOSS names the blob and
  // the first bad block's offset, and carries it (BadBlockOf). Their tree
  // blocks must be verified.
  absl::Status VerifyData(uint64_t first, absl::Span<const uint8_t> data,
                          uint64_t* next, uint64_t upto);
  // Hashes data block `index` (`bytes`: the block, or the rest of the blob
  // for the last one) whatever verify_once remembers: for a copy read again
  // from the store. Its tree blocks must be verified. Errors as VerifyData.
  absl::Status CheckDataBlock(uint64_t index,
                              absl::Span<const uint8_t> bytes) const;

  // Starts reading, without waiting, the tree blocks that data blocks
  // [first_block, end_block) need and that are not verified yet.
  void PrefetchTree(uint64_t first_block, uint64_t end_block) const;
  // The same, and the data blocks too: read-ahead.
  void Prefetch(uint64_t first_block, uint64_t end_block) const;

  // Data blocks [first_block, end_block), or a tree block they need, failed
  // verification: asks the store to drop any copy it keeps of them (see
  // Blob::Forget), so that a read again comes from where the blob is stored.
  // True if there was a copy, and so reason to read again.
  bool Forget(uint64_t first_block, uint64_t end_block) const;

  // A copy of a verified tree block; NOT_FOUND if it is not verified.
  absl::StatusOr<std::string> VerifiedTreeBlock(TreeBlockId id) const;

  // True if every tree block that data blocks [first_block, end_block) need is
  // verified.
  bool TreeIsVerifiedFor(uint64_t first_block, uint64_t end_block) const;

  // What a cache charges for this blob: its verified tree and the bitmap.
  uint64_t cached_bytes() const {
    return tree_->cached_bytes() + verified_blocks_.size() * sizeof(uint64_t);
  }
  // Bytes of verified tree blocks held.
  uint64_t cached_tree_bytes() const {
    return tree_->verified_blocks() * geometry().block_size();
  }
  // Data blocks hashed so far: what the dispatch promises not to waste.
  uint64_t data_blocks_hashed() const {
    return data_blocks_hashed_.load(std::memory_order_relaxed);
  }

 private:
  VerifiedBlob(std::shared_ptr<const Blob> blob,
               std::shared_ptr<VerifiedTree> tree, bool verify_once);

  absl::Status Annotate(const absl::Status& status) const;
  bool IsMarkedVerified(uint64_t block) const;
  void MarkVerified(uint64_t block);

  const std::shared_ptr<const Blob> blob_;
  const std::shared_ptr<VerifiedTree> tree_;
  std::atomic<uint64_t> data_blocks_hashed_{0};
  // One bit per data block, set once verified; empty unless verify_once.
  // Atomic words, so readers of different ranges never contend on a lock.
  std::vector<std::atomic<uint64_t>> verified_blocks_;
};

// True if `status` is a DATA_LOSS that VerifiedBlob found in the blob's tree
// rather than in a data block.
bool IsTreeCorruption(const absl::Status& status);

// Marks a DATA_LOSS (a short tree file, say) as found in the tree.
absl::Status InTree(absl::Status status);

// The block VerifiedBlob found bad, numbered as the FEC area covers blocks
// (data blocks, then tree blocks in the serialized tree's order: FecBlocks());
// nullopt for a status that names none.
std::optional<uint64_t> BadBlockOf(const absl::Status& status);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_VERIFIED_BLOB_H_
