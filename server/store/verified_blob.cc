// Implements VerifiedBlob on lib's VerifiedTree: tree blocks are read from the
// store and verified under the tree's exclusive lock, data blocks only under
// its shared one, so many streams verify data concurrently.

#include "server/store/verified_blob.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/hash.h"
#include "lib/status_macros.h"

namespace verity::server {
namespace {

constexpr absl::string_view kTreeCorruption = "verityd/corruption-in-tree";

// Marks a DATA_LOSS as found in the tree.
absl::Status InTree(absl::Status status) {
  if (status.code() == absl::StatusCode::kDataLoss) {
    status.SetPayload(kTreeCorruption, absl::Cord("tree"));
  }
  return status;
}

}  // namespace

bool IsTreeCorruption(const absl::Status& status) {
  return status.GetPayload(kTreeCorruption).has_value();
}

absl::StatusOr<std::shared_ptr<VerifiedBlob>> VerifiedBlob::Create(
    std::shared_ptr<const Blob> blob, bool verify_once) {
  VerifierOptions options;
  options.max_block_size = blob->geometry().block_size();
  absl::StatusOr<std::shared_ptr<VerifiedTree>> tree =
      VerifiedTree::Create(blob->descriptor(), blob->digest(), options);
  if (!tree.ok()) {
    return absl::DataLossError(absl::StrCat("blob ", blob->digest_text(), ": ",
                                            tree.status().message()));
  }
  return std::shared_ptr<VerifiedBlob>(
      new VerifiedBlob(std::move(blob), *std::move(tree), verify_once));
}

VerifiedBlob::VerifiedBlob(std::shared_ptr<const Blob> blob,
                           std::shared_ptr<VerifiedTree> tree, bool verify_once)
    : blob_(std::move(blob)),
      tree_(std::move(tree)),
      verified_blocks_(
          verify_once ? DivRoundUp(blob_->geometry().data_block_count(), 64)
                      : 0) {}

absl::Status VerifiedBlob::Load(uint64_t first_block, uint64_t end_block,
                                BlockRead* read) {
  read->first = read->next = first_block;
  read->end = end_block;
  RETURN_IF_ERROR(ReadUnverified(*blob_, first_block, end_block, &read->data));
  read->loaded = true;
  return absl::OkStatus();
}

absl::Status VerifiedBlob::VerifyCached(BlockRead* read) {
  return VerifyLoaded(read, CachedUpTo(*read));
}

absl::Status VerifiedBlob::VerifyRest(BlockRead* read) {
  if (read->next == read->end) return absl::OkStatus();
  RETURN_IF_ERROR(VerifyTreeFor(read->next, read->end));
  return VerifyLoaded(read, read->end);
}

uint64_t VerifiedBlob::CachedUpTo(const BlockRead& read) const {
  const TreeGeometry& geometry = blob_->geometry();
  uint64_t checked_tree_block = UINT64_MAX;
  for (uint64_t i = read.next; i < read.end; ++i) {
    if (IsMarkedVerified(i)) continue;
    absl::StatusOr<HashLocation> location = geometry.DataBlockHashLocation(i);
    if (!location.ok()) return i;
    if (location->is_root || location->block_index == checked_tree_block) {
      continue;
    }
    if (!tree_->IsVerified({location->level, location->block_index})) {
      return i;
    }
    checked_tree_block = location->block_index;
  }
  return read.end;
}

absl::Status VerifiedBlob::VerifyLoaded(BlockRead* read, uint64_t upto) {
  const uint64_t bs = geometry().block_size();
  const absl::Span<const uint8_t> data = AsBytes(read->data);
  uint64_t hashed = 0;
  absl::Status status;
  for (; read->next < upto; ++read->next) {
    const uint64_t i = read->next;
    if (IsMarkedVerified(i)) continue;
    status =
        tree_->VerifyDataBlock(i, data.subspan((i - read->first) * bs, bs));
    ++hashed;
    if (!status.ok()) break;
    MarkVerified(i);
  }
  data_blocks_hashed_.fetch_add(hashed, std::memory_order_relaxed);
  if (!status.ok()) {
    read->data.clear();
    read->loaded = false;
  }
  return Annotate(status);
}

bool VerifiedBlob::IsMarkedVerified(uint64_t block) const {
  if (verified_blocks_.empty()) return false;
  const uint64_t word =
      verified_blocks_[block / 64].load(std::memory_order_acquire);
  return (word & (uint64_t{1} << (block % 64))) != 0;
}

void VerifiedBlob::MarkVerified(uint64_t block) {
  if (verified_blocks_.empty()) return;
  verified_blocks_[block / 64].fetch_or(uint64_t{1} << (block % 64),
                                        std::memory_order_release);
}

void VerifiedBlob::PrefetchTree(uint64_t first_block,
                                uint64_t end_block) const {
  const std::vector<TreeBlockId> missing =
      tree_->Missing({first_block, end_block});
  // Missing blocks of one level are consecutive: one hint per level.
  const TreeGeometry& geometry = blob_->geometry();
  const uint64_t bs = geometry.block_size();
  for (size_t i = 0; i < missing.size();) {
    size_t j = i + 1;
    while (j < missing.size() && missing[j].level == missing[i].level) ++j;
    const uint64_t begin = geometry.Ordinal(missing[i]);
    const uint64_t last = geometry.Ordinal(missing[j - 1]);
    blob_->PrefetchTree(begin * bs, (last - begin + 1) * bs);
    i = j;
  }
}

absl::Status VerifiedBlob::VerifyTreeFor(uint64_t first_block,
                                         uint64_t end_block) {
  const TreeGeometry& geometry = blob_->geometry();
  std::string block(geometry.block_size(), '\0');
  // Streams that need the same block may both read it; the tree verifies it
  // once and then only compares.
  for (const TreeBlockId& id : tree_->Missing({first_block, end_block})) {
    RETURN_IF_ERROR(InTree(
        Annotate(blob_->ReadTree(geometry.Ordinal(id) * geometry.block_size(),
                                 AsMutableBytes(&block)))));
    RETURN_IF_ERROR(InTree(Annotate(tree_->Add(id, AsBytes(block)).status())));
  }
  return absl::OkStatus();
}

bool VerifiedBlob::TreeIsVerifiedFor(uint64_t first_block,
                                     uint64_t end_block) const {
  return tree_->Missing({first_block, end_block}).empty();
}

absl::StatusOr<std::string> VerifiedBlob::VerifiedTreeBlock(
    TreeBlockId id) const {
  return tree_->Block(id);
}

absl::Status VerifiedBlob::Annotate(const absl::Status& status) const {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("blob ", blob_->digest_text(),
                                                  ": ", status.message()));
}

VerifiedTreeCacheOptions CacheOptionsOf(
    const VerifiedBlobCacheOptions& options) {
  VerifiedTreeCacheOptions cache;
  cache.max_bytes = options.max_tree_bytes;
  cache.max_entries = options.max_blobs;
  return cache;
}

absl::StatusOr<std::shared_ptr<VerifiedBlob>> OpenVerifiedBlob(
    VerifiedBlobCache& cache, const BlobStore& store,
    const ParsedDigest& digest, bool verify_once) {
  return cache.FindOrCreate(
      digest, [&]() -> absl::StatusOr<std::shared_ptr<VerifiedBlob>> {
        ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob,
                         store.OpenBlob(digest));
        return VerifiedBlob::Create(std::move(blob), verify_once);
      });
}

absl::Status ReadUnverified(const Blob& blob, uint64_t first_block,
                            uint64_t end_block, std::string* out) {
  const ByteRange bytes = BytesOf(blob.geometry(), {first_block, end_block});
  if (bytes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no data blocks in [", first_block, ", ", end_block, ")"));
  }
  out->resize(bytes.size());
  return blob.ReadData(bytes.begin, AsMutableBytes(out));
}

}  // namespace verity::server
