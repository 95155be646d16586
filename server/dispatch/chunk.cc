// Implements Chunk on VerifiedBlob's steps and the store's two reads.

#include "server/dispatch/chunk.h"

#include <algorithm>
#include <utility>

#include "lib/hash/hash.h"
#include "server/store/read_join.h"

namespace verity::server {

Chunk::Chunk(std::shared_ptr<VerifiedBlob> blob, BlockRange blocks,
             std::shared_ptr<BufferPool> buffers, bool reread)
    : blob_(std::move(blob)),
      blocks_(blocks),
      buffers_(std::move(buffers)),
      reread_(reread),
      next_(blocks.first) {}

std::optional<absl::Status> Chunk::TryLoadNow() {
  if (loaded_) return absl::OkStatus();
  const ByteRange bytes = BytesOf(blob_->geometry(), blocks_);
  // Not zero-filled: the read fills every byte, or fails and drops it.
  Buffer data = buffers_->Take(bytes.size());
  std::optional<absl::Status> read =
      blob_->blob().TryReadNow(BlobPart::kData, bytes.begin, data.span());
  // The store's errors name the blob already.
  if (!read.has_value() || !read->ok()) return read;
  data_ = std::move(data);
  loaded_ = true;
  return absl::OkStatus();
}

absl::Status Chunk::VerifyCached() {
  return Verify(blob_->VerifiableUpTo(next_, blocks_.end));
}

std::optional<absl::Status> Chunk::TryFinishNow() {
  if (verified()) return absl::OkStatus();
  if (absl::Status added = AddFetchedTree(); !added.ok()) return Fail(added);
  if (std::optional<absl::Status> loaded = TryLoadNow();
      !loaded.has_value() || !loaded->ok()) {
    return loaded;
  }
  std::optional<absl::Status> tree = TryReadTreeNow();
  if (!tree.has_value()) return std::nullopt;
  if (!tree->ok()) return Fail(*tree);
  return Verify(blocks_.end);
}

void Chunk::FetchLater(Done done) {
  struct Fetched {
    Buffer data;
    std::vector<Buffer> tree;  // one per run
  };
  const TreeGeometry& geometry = blob_->geometry();
  const uint64_t bs = geometry.block_size();
  const bool load = !loaded_;
  std::vector<TreeRun> runs = MissingTreeRuns();
  std::vector<ByteRange> tree_bytes;
  for (const TreeRun& run : runs) {
    const uint64_t begin = geometry.Ordinal(run.first) * bs;
    tree_bytes.push_back({begin, begin + run.count * bs});
  }
  auto fetched = std::make_shared<Fetched>();
  fetched->tree.resize(runs.size());
  const int reads = (load ? 1 : 0) + static_cast<int>(runs.size());
  // The chunk takes the bytes only once every read is in: until then each
  // read writes into its own buffer.
  auto join = ReadJoin::Create(
      std::max(reads, 1),
      [self = shared_from_this(), fetched, runs = std::move(runs), load,
       done = std::move(done)](absl::Status status) mutable {
        if (status.ok()) {
          if (load) {
            self->data_ = std::move(fetched->data);
            self->loaded_ = true;
          }
          for (size_t i = 0; i < runs.size(); ++i) {
            runs[i].bytes = std::move(fetched->tree[i]);
          }
          self->fetched_tree_ = std::move(runs);
        }
        std::move(done)(std::move(status));
      });
  const Blob& store = blob_->blob();
  if (load) {
    const ByteRange bytes = BytesOf(geometry, blocks_);
    store.ReadAsync(BlobPart::kData, bytes.begin, buffers_->Take(bytes.size()),
                    [fetched, join](absl::StatusOr<Buffer> read) {
                      if (read.ok()) fetched->data = *std::move(read);
                      join->Report(read.status());
                    });
  }
  for (size_t i = 0; i < tree_bytes.size(); ++i) {
    store.ReadAsync(BlobPart::kTree, tree_bytes[i].begin,
                    buffers_->Take(tree_bytes[i].size()),
                    [fetched, join, i](absl::StatusOr<Buffer> read) {
                      if (read.ok()) fetched->tree[i] = *std::move(read);
                      join->Report(read.status());
                    });
  }
  // Nothing left to fetch (another stream verified the tree blocks since the
  // chunk found them missing): an empty read still completes later.
  if (reads == 0) {
    store.ReadAsync(
        BlobPart::kData, 0, Buffer(),
        [join](absl::StatusOr<Buffer> read) { join->Report(read.status()); });
  }
}

Buffer Chunk::TakeData() { return std::move(data_); }

std::vector<Chunk::TreeRun> Chunk::MissingTreeRuns() const {
  std::vector<TreeRun> runs;
  // Missing blocks come top level first, and those of one level are
  // consecutive.
  for (const TreeBlockId& id : blob_->MissingTree(next_, blocks_.end)) {
    if (!runs.empty() && runs.back().first.level == id.level) {
      ++runs.back().count;
    } else {
      runs.push_back({id, 1, {}});
    }
  }
  return runs;
}

absl::Status Chunk::AddFetchedTree() {
  const uint64_t bs = blob_->geometry().block_size();
  std::vector<TreeRun> runs = std::move(fetched_tree_);
  fetched_tree_.clear();
  for (const TreeRun& run : runs) {
    for (uint64_t i = 0; i < run.count; ++i) {
      const TreeBlockId id{run.first.level, run.first.index + i};
      absl::Status added =
          blob_->AddTreeBlock(id, run.bytes.span().subspan(i * bs, bs));
      if (!added.ok()) return added;
    }
  }
  return absl::OkStatus();
}

std::optional<absl::Status> Chunk::TryReadTreeNow() {
  const TreeGeometry& geometry = blob_->geometry();
  const uint64_t bs = geometry.block_size();
  const std::vector<TreeBlockId> missing =
      blob_->MissingTree(next_, blocks_.end);
  if (missing.empty()) return absl::OkStatus();
  // One buffer for every block: each read fills it whole or fails.
  Buffer block = buffers_->Take(bs);
  // Streams that need the same block may both read it; the tree verifies it
  // once and then only compares.
  for (const TreeBlockId& id : missing) {
    std::optional<absl::Status> read = blob_->blob().TryReadNow(
        BlobPart::kTree, geometry.Ordinal(id) * bs, block.span());
    if (!read.has_value()) return std::nullopt;
    if (!read->ok()) return InTree(*std::move(read));
    if (absl::Status added = blob_->AddTreeBlock(id, block.span());
        !added.ok()) {
      return added;
    }
  }
  return absl::OkStatus();
}

absl::Status Chunk::Verify(uint64_t upto) {
  absl::Status status =
      blob_->VerifyData(blocks_.first, data_.span(), &next_, upto);
  if (!status.ok()) return Fail(std::move(status));
  return status;
}

absl::Status Chunk::Fail(absl::Status status) {
  data_ = Buffer();
  loaded_ = false;
  fetched_tree_.clear();
  return status;
}

}  // namespace verity::server
