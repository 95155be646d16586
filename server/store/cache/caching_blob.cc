// Implements CachingBlob.

#include "server/store/cache/caching_blob.h"

#include <algorithm>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace verity::server {
namespace {

// Calls `done` once every piece of a read is in, with the first error.
class Join {
 public:
  Join(int pieces, Blob::ReadDone done)
      : remaining_(pieces), done_(std::move(done)) {}

  void PieceDone(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::Status first;
    {
      absl::MutexLock lock(&mu_);
      if (status_.ok()) status_ = std::move(status);
      if (--remaining_ > 0) return;
      first = status_;
    }
    std::move(done_)(std::move(first));
  }

 private:
  absl::Mutex mu_;
  int remaining_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  // Run once, by the last piece, after which nothing else touches the join.
  Blob::ReadDone done_;
};

}  // namespace

CachingBlob::CachingBlob(std::shared_ptr<const Blob> source, SlabCache* cache)
    : Blob(*source), source_(std::move(source)), cache_(cache) {}

bool CachingBlob::InRange(BlobPart part, uint64_t offset,
                          uint64_t length) const {
  const uint64_t size =
      part == BlobPart::kData ? geometry().data_size() : geometry().tree_size();
  return offset <= size && length <= size - offset;
}

void CachingBlob::ForEachPiece(
    BlobPart part, uint64_t offset, uint64_t length,
    absl::FunctionRef<void(const Piece&)> visit) const {
  const uint64_t slab = cache_->slab_bytes();
  for (uint64_t at = offset; at < offset + length;) {
    Piece piece;
    piece.key = {digest(), part, at / slab};
    piece.offset_in_slab = at % slab;
    piece.length = std::min(slab - piece.offset_in_slab, offset + length - at);
    piece.offset_in_range = at - offset;
    visit(piece);
    at += piece.length;
  }
}

bool CachingBlob::IsLocal(BlobPart part, uint64_t offset,
                          uint64_t length) const {
  if (length == 0) return true;
  if (!InRange(part, offset, length))
    return source_->IsLocal(part, offset, length);
  bool local = true;
  ForEachPiece(part, offset, length, [&](const Piece& piece) {
    local = local && cache_->Contains(piece.key);
  });
  return local;
}

void CachingBlob::Read(BlobPart part, uint64_t offset, absl::Span<uint8_t> out,
                       ReadDone done) const {
  // The source reports what is out of range, and completes an empty read.
  if (out.empty() || !InRange(part, offset, out.size())) {
    source_->Read(part, offset, out, std::move(done));
    return;
  }
  int pieces = 0;
  ForEachPiece(part, offset, out.size(), [&](const Piece&) { ++pieces; });
  auto join = std::make_shared<Join>(pieces, std::move(done));
  ForEachPiece(part, offset, out.size(), [&](const Piece& piece) {
    cache_->Read(
        source_, piece.key, piece.offset_in_slab,
        out.subspan(piece.offset_in_range, piece.length),
        [join](absl::Status status) { join->PieceDone(std::move(status)); });
  });
}

void CachingBlob::Prefetch(BlobPart part, uint64_t offset,
                           uint64_t length) const {
  if (length == 0 || !InRange(part, offset, length)) return;
  ForEachPiece(part, offset, length, [&](const Piece& piece) {
    cache_->Prefetch(source_, piece.key);
  });
}

bool CachingBlob::Forget(BlobPart part, uint64_t offset,
                         uint64_t length) const {
  if (length == 0 || !InRange(part, offset, length)) return false;
  bool forgot = false;
  ForEachPiece(part, offset, length, [&](const Piece& piece) {
    forgot = cache_->Forget(piece.key) || forgot;
  });
  return forgot;
}

}  // namespace verity::server
