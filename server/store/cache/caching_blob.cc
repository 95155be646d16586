// Implements CachingBlob.

#include "server/store/cache/caching_blob.h"

#include <algorithm>
#include <utility>

#include "lib/hash/hash.h"
#include "server/store/read_join.h"

namespace verity::server {

CachingBlob::CachingBlob(std::shared_ptr<const Blob> source,
                         std::shared_ptr<SlabCache> cache)
    : Blob(*source), source_(std::move(source)), cache_(std::move(cache)) {}

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

std::optional<absl::Status> CachingBlob::TryReadNow(
    BlobPart part, uint64_t offset, absl::Span<uint8_t> out) const {
  if (absl::Status range = CheckReadRange(*this, part, offset, out.size());
      !range.ok() || out.empty()) {
    return range;
  }
  bool here = true;
  ForEachPiece(part, offset, out.size(), [&](const Piece& piece) {
    here = here &&
           cache_->TryRead(piece.key, piece.offset_in_slab,
                           out.subspan(piece.offset_in_range, piece.length));
  });
  if (!here) return std::nullopt;
  return absl::OkStatus();
}

void CachingBlob::ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                            ReadDone done) const {
  const uint64_t length = into.size();
  // The source reports what is out of range, and answers an empty read.
  if (!CheckReadRange(*this, part, offset, length).ok() || length == 0) {
    source_->ReadAsync(part, offset, std::move(into), std::move(done));
    return;
  }
  int pieces = 0;
  ForEachPiece(part, offset, length, [&](const Piece&) { ++pieces; });
  // The pieces write into `bytes`, which the join's completion owns and every
  // piece's completion shares: it outlives the last write into it.
  auto bytes = std::make_shared<Buffer>(std::move(into));
  auto join = ReadJoin::Create(
      pieces, [bytes, done = std::move(done)](absl::Status status) mutable {
        if (!status.ok()) {
          std::move(done)(status);
          return;
        }
        std::move(done)(std::move(*bytes));
      });
  const absl::Span<uint8_t> out = bytes->span();
  ForEachPiece(part, offset, length, [&](const Piece& piece) {
    cache_->ReadAsync(
        source_, piece.key, piece.offset_in_slab,
        out.subspan(piece.offset_in_range, piece.length),
        [join](absl::Status status) { join->Report(std::move(status)); });
  });
}

void CachingBlob::Prefetch(BlobPart part, uint64_t offset,
                           uint64_t length) const {
  if (length == 0 || !CheckReadRange(*this, part, offset, length).ok()) return;
  ForEachPiece(part, offset, length, [&](const Piece& piece) {
    cache_->Prefetch(source_, piece.key);
  });
}

bool CachingBlob::Forget(BlobPart part, uint64_t offset,
                         uint64_t length) const {
  if (length == 0 || !CheckReadRange(*this, part, offset, length).ok()) {
    return false;
  }
  bool forgot = false;
  ForEachPiece(part, offset, length, [&](const Piece& piece) {
    forgot = cache_->Forget(piece.key) || forgot;
  });
  return forgot;
}

absl::Status CachingBlob::Rewrite(BlobPart part, uint64_t offset,
                                  absl::Span<const uint8_t> bytes) const {
  if (absl::Status rewritten = source_->Rewrite(part, offset, bytes);
      !rewritten.ok()) {
    return rewritten;
  }
  Forget(part, offset, bytes.size());
  return absl::OkStatus();
}

}  // namespace verity::server
