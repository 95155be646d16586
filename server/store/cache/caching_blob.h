// A remote store's blob read through the slab cache: every read is split at
// slab boundaries, and each slab comes from memory, the disk cache or one
// aligned ranged read of the store shared by every read that wants it.

#ifndef VERITYD_SERVER_STORE_CACHE_CACHING_BLOB_H_
#define VERITYD_SERVER_STORE_CACHE_CACHING_BLOB_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/functional/function_ref.h"
#include "server/store/cache/slab_cache.h"
#include "server/store/store.h"

namespace verity::server {

// Immutable and thread-safe. Shares the cache with its store, which it may
// outlive.
class CachingBlob final : public Blob {
 public:
  CachingBlob(std::shared_ptr<const Blob> source,
              std::shared_ptr<SlabCache> cache);

  // Here if every slab of the range is in memory or on the disk cache.
  std::optional<absl::Status> TryReadNow(
      BlobPart part, uint64_t offset, absl::Span<uint8_t> out) const override;
  // Each slab from memory, the disk cache or a fetch, into a buffer the
  // read owns; completes on the cache's thread or the store's.
  void ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                 ReadDone done) const override;
  // Read-ahead: starts fetching the slabs of the range that are not cached.
  void Prefetch(BlobPart part, uint64_t offset, uint64_t length) const override;
  bool Forget(BlobPart part, uint64_t offset, uint64_t length) const override;
  // The source's Rewrite; then the slabs of the range, which hold the bytes
  // as they were, are dropped.
  absl::Status Rewrite(BlobPart part, uint64_t offset,
                       absl::Span<const uint8_t> bytes) const override;
  const Blob& Stored() const override { return source_->Stored(); }

 private:
  // A range's piece within one slab.
  struct Piece {
    SlabKey key;
    uint64_t offset_in_slab;
    uint64_t length;
    uint64_t offset_in_range;
  };
  // Calls `visit` for each slab piece of [offset, offset + length) of `part`,
  // which must lie within it.
  void ForEachPiece(BlobPart part, uint64_t offset, uint64_t length,
                    absl::FunctionRef<void(const Piece&)> visit) const;

  const std::shared_ptr<const Blob> source_;
  const std::shared_ptr<SlabCache> cache_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_CACHE_CACHING_BLOB_H_
