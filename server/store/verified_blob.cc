// Implements VerifiedBlob on lib's VerifiedTree: tree blocks are read from the
// store and verified under the tree's exclusive lock, data blocks only under
// its shared one, so many streams verify data concurrently.

#include "server/store/verified_blob.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
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

// The data bytes of blocks [first_block, end_block); INVALID_ARGUMENT if none.
absl::StatusOr<ByteRange> DataBytes(const Blob& blob, uint64_t first_block,
                                    uint64_t end_block) {
  const ByteRange bytes = BytesOf(blob.geometry(), {first_block, end_block});
  if (bytes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no data blocks in [", first_block, ", ", end_block, ")"));
  }
  return bytes;
}

// Collects the statuses of several reads and calls `done` with the first
// error, or OK, once the last one and Release() are in. Thread-safe; deletes
// itself.
class ReadGroup {
 public:
  explicit ReadGroup(Blob::ReadDone done) : done_(std::move(done)) {}

  // A callback for one more read.
  Blob::ReadDone Add() {
    pending_.fetch_add(1);
    return [this](absl::Status status) { Finish(std::move(status)); };
  }

  // Called once, after every Add(): the group completes when the reads have,
  // possibly at once.
  void Release() { Finish(absl::OkStatus()); }

 private:
  void Finish(absl::Status status) {
    {
      absl::MutexLock lock(&mu_);
      if (status_.ok()) status_ = std::move(status);
    }
    if (pending_.fetch_sub(1) != 1) return;
    std::move(done_)(status_);
    delete this;
  }

  Blob::ReadDone done_;
  std::atomic<int> pending_{1};  // the reads, and Release()
  absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

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
  ASSIGN_OR_RETURN(const ByteRange bytes,
                   DataBytes(*blob_, first_block, end_block));
  read->data.resize(bytes.size());
  RETURN_IF_ERROR(ReadLocal(*blob_, BlobPart::kData, bytes.begin,
                            AsMutableBytes(&read->data)));
  read->loaded = true;
  return absl::OkStatus();
}

bool VerifiedBlob::IsLocal(uint64_t first_block, uint64_t end_block) const {
  const ByteRange bytes = BytesOf(geometry(), {first_block, end_block});
  if (!blob_->IsLocal(BlobPart::kData, bytes.begin, bytes.size())) {
    return false;
  }
  const uint64_t bs = geometry().block_size();
  for (const TreeBlockId& id : tree_->Missing({first_block, end_block})) {
    if (!blob_->IsLocal(BlobPart::kTree, geometry().Ordinal(id) * bs, bs)) {
      return false;
    }
  }
  return true;
}

void VerifiedBlob::Fetch(uint64_t first_block, uint64_t end_block,
                         BlockRead* read, Blob::ReadDone done) {
  if (!read->loaded) {
    read->first = read->next = first_block;
    read->end = end_block;
  }
  absl::StatusOr<ByteRange> bytes = DataBytes(*blob_, read->first, read->end);
  if (!bytes.ok()) {
    std::move(done)(bytes.status());
    return;
  }
  // Every buffer is sized before the first read starts: a local read
  // completes inside Read().
  const bool load = !read->loaded;
  if (load) read->data.resize(bytes->size());
  read->fetched_tree = TreeRunsFor(read->next, read->end);
  auto* group = new ReadGroup(
      [this, read, load, done = std::move(done)](absl::Status status) mutable {
        if (status.ok() && load) read->loaded = true;
        // The store's errors name the blob already.
        if (!status.ok()) {
          read->data.clear();
          read->fetched_tree.clear();
        }
        std::move(done)(status);
      });
  if (load) {
    blob_->Read(BlobPart::kData, bytes->begin, AsMutableBytes(&read->data),
                group->Add());
  }
  const uint64_t bs = geometry().block_size();
  for (BlockRead::TreeRun& run : read->fetched_tree) {
    blob_->Read(BlobPart::kTree, geometry().Ordinal(run.first) * bs,
                AsMutableBytes(&run.bytes), group->Add());
  }
  group->Release();
}

std::vector<BlockRead::TreeRun> VerifiedBlob::TreeRunsFor(
    uint64_t first_block, uint64_t end_block) const {
  std::vector<BlockRead::TreeRun> runs;
  // Missing blocks come top level first, and those of one level are
  // consecutive.
  for (const TreeBlockId& id : tree_->Missing({first_block, end_block})) {
    if (!runs.empty() && runs.back().first.level == id.level) {
      ++runs.back().count;
    } else {
      runs.push_back({id, 1, {}});
    }
  }
  for (BlockRead::TreeRun& run : runs) {
    run.bytes.resize(run.count * geometry().block_size());
  }
  return runs;
}

absl::Status VerifiedBlob::VerifyCached(BlockRead* read) {
  return VerifyLoaded(read, CachedUpTo(*read));
}

absl::Status VerifiedBlob::VerifyRest(BlockRead* read) {
  if (read->next == read->end) return absl::OkStatus();
  absl::Status status = AddFetchedTree(read);
  if (status.ok()) status = VerifyTreeFor(read->next, read->end);
  if (!status.ok()) {
    // As for bad data: nothing of a read whose tree failed is kept.
    read->data.clear();
    read->loaded = false;
    return status;
  }
  return VerifyLoaded(read, read->end);
}

absl::Status VerifiedBlob::AddFetchedTree(BlockRead* read) {
  const uint64_t bs = geometry().block_size();
  std::vector<BlockRead::TreeRun> runs = std::move(read->fetched_tree);
  read->fetched_tree.clear();
  for (const BlockRead::TreeRun& run : runs) {
    for (uint64_t i = 0; i < run.count; ++i) {
      const TreeBlockId id{run.first.level, run.first.index + i};
      RETURN_IF_ERROR(InTree(Annotate(
          tree_->Add(id, AsBytes(run.bytes).subspan(i * bs, bs)).status())));
    }
  }
  return absl::OkStatus();
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
  const auto blocks = [&](uint64_t first, uint64_t end) {
    return data.subspan((first - read->first) * bs, (end - first) * bs);
  };
  uint64_t hashed = 0;
  absl::Status status;
  while (read->next < upto && status.ok()) {
    if (IsMarkedVerified(read->next)) {
      ++read->next;
      continue;
    }
    // A run of blocks not verified before, hashed together (two at a time
    // with SHA-NI); only when it fails, block by block to find the culprit.
    uint64_t end = read->next + 1;
    while (end < upto && !IsMarkedVerified(end)) ++end;
    hashed += end - read->next;
    if (tree_->VerifyData(read->next, blocks(read->next, end)).ok()) {
      for (; read->next < end; ++read->next) MarkVerified(read->next);
      continue;
    }
    for (; read->next < end; ++read->next) {
      ++hashed;
      status = tree_->VerifyDataBlock(read->next,
                                      blocks(read->next, read->next + 1));
      if (!status.ok()) break;
      MarkVerified(read->next);
    }
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

absl::Status VerifiedBlob::VerifyTreeFor(uint64_t first_block,
                                         uint64_t end_block) {
  const TreeGeometry& geometry = blob_->geometry();
  std::string block(geometry.block_size(), '\0');
  // What Fetch() did not bring, a local blob reads now. Streams that need the
  // same block may both read it; the tree verifies it once and then only
  // compares.
  for (const TreeBlockId& id : tree_->Missing({first_block, end_block})) {
    RETURN_IF_ERROR(InTree(Annotate(ReadLocal(
        *blob_, BlobPart::kTree, geometry.Ordinal(id) * geometry.block_size(),
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

}  // namespace verity::server
