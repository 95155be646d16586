// Implements VerifiedBlob on lib's VerifiedTree: tree blocks are read from the
// store and verified under the tree's exclusive lock, data blocks only under
// its shared one, so many streams verify data concurrently.

#include "server/store/verified_blob.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"

namespace verity::server {
namespace {

constexpr absl::string_view kTreeCorruption = "verityd/corruption-in-tree";
constexpr absl::string_view kBadBlock = "verityd/bad-block";

absl::Status WithBadBlock(absl::Status status, uint64_t block) {
  if (status.code() == absl::StatusCode::kDataLoss) {
    status.SetPayload(kBadBlock, absl::Cord(absl::StrCat(block)));
  }
  return status;
}

}  // namespace

std::optional<uint64_t> BadBlockOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kBadBlock);
  uint64_t block;
  if (!payload.has_value() ||
      !absl::SimpleAtoi(std::string(*payload), &block)) {
    return std::nullopt;
  }
  return block;
}

absl::Status InTree(absl::Status status) {
  if (status.code() == absl::StatusCode::kDataLoss) {
    status.SetPayload(kTreeCorruption, absl::Cord("tree"));
  }
  return status;
}

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

std::vector<TreeBlockId> VerifiedBlob::MissingTree(uint64_t first_block,
                                                   uint64_t end_block) const {
  return tree_->Missing({first_block, end_block});
}

absl::Status VerifiedBlob::AddTreeBlock(TreeBlockId id,
                                        absl::Span<const uint8_t> bytes) {
  return WithBadBlock(InTree(Annotate(tree_->Add(id, bytes).status())),
                      geometry().data_block_count() + geometry().Ordinal(id));
}

uint64_t VerifiedBlob::VerifiableUpTo(uint64_t from, uint64_t end) const {
  const TreeGeometry& geometry = blob_->geometry();
  uint64_t checked_tree_block = UINT64_MAX;
  for (uint64_t i = from; i < end; ++i) {
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
  return end;
}

absl::Status VerifiedBlob::VerifyData(uint64_t first,
                                      absl::Span<const uint8_t> data,
                                      uint64_t* next, uint64_t upto) {
  const uint64_t bs = geometry().block_size();
  const auto blocks = [&](uint64_t from, uint64_t end) {
    return data.subspan((from - first) * bs, (end - from) * bs);
  };
  uint64_t hashed = 0;
  absl::Status status;
  while (*next < upto && status.ok()) {
    if (IsMarkedVerified(*next)) {
      ++*next;
      continue;
    }
    // A run of blocks not verified before, hashed together (two at a time
    // with SHA-NI); only when it fails, block by block to find the culprit.
    uint64_t end = *next + 1;
    while (end < upto && !IsMarkedVerified(end)) ++end;
    hashed += end - *next;
    if (tree_->VerifyData(*next, blocks(*next, end)).ok()) {
      for (; *next < end; ++*next) MarkVerified(*next);
      continue;
    }
    for (; *next < end; ++*next) {
      ++hashed;
      status = tree_->VerifyDataBlock(*next, blocks(*next, *next + 1));
      if (!status.ok()) break;
      MarkVerified(*next);
    }
  }
  data_blocks_hashed_.fetch_add(hashed, std::memory_order_relaxed);
  return WithBadBlock(Annotate(status), *next);
}

absl::Status VerifiedBlob::CheckDataBlock(
    uint64_t index, absl::Span<const uint8_t> bytes) const {
  return WithBadBlock(Annotate(tree_->VerifyDataBlock(index, bytes)), index);
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
    blob_->Prefetch(BlobPart::kTree, begin * bs, (last - begin + 1) * bs);
    i = j;
  }
}

void VerifiedBlob::Prefetch(uint64_t first_block, uint64_t end_block) const {
  const ByteRange bytes = BytesOf(geometry(), {first_block, end_block});
  if (bytes.empty()) return;
  blob_->Prefetch(BlobPart::kData, bytes.begin, bytes.size());
  PrefetchTree(first_block, end_block);
}

bool VerifiedBlob::Forget(uint64_t first_block, uint64_t end_block) const {
  const ByteRange bytes = BytesOf(geometry(), {first_block, end_block});
  if (bytes.empty()) return false;
  bool forgot = blob_->Forget(BlobPart::kData, bytes.begin, bytes.size());
  const uint64_t bs = geometry().block_size();
  for (const TreeBlockId& id :
       TreeBlocksFor(geometry(), {first_block, end_block})) {
    forgot = blob_->Forget(BlobPart::kTree, geometry().Ordinal(id) * bs, bs) ||
             forgot;
  }
  return forgot;
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

}  // namespace verity::server
