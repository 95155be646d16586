// Implements ServedBlobs: the store changes first, the cache after, so that a
// blob removed from the cache cannot be opened again from the store.

#include "server/store/served_blobs.h"

#include <utility>

#include "lib/base/status_macros.h"

namespace verity::server {

LruCacheOptions CacheOptionsOf(const VerifiedBlobCacheOptions& options) {
  LruCacheOptions cache;
  cache.max_bytes = options.max_tree_bytes;
  cache.max_entries = options.max_blobs;
  return cache;
}

ServedBlobs::ServedBlobs(Store* store, const VerifiedBlobCacheOptions& cache,
                         bool verify_once)
    : store_(store), verify_once_(verify_once), cache_(CacheOptionsOf(cache)) {}

absl::StatusOr<std::shared_ptr<VerifiedBlob>> ServedBlobs::Open(
    const ParsedDigest& digest) {
  return cache_.FindOrCreate(
      digest, [&]() -> absl::StatusOr<std::shared_ptr<VerifiedBlob>> {
        ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob,
                         store_->OpenBlob(digest));
        return VerifiedBlob::Create(std::move(blob), verify_once_);
      });
}

void ServedBlobs::Update(const VerifiedBlob& blob) { cache_.Update(blob); }

absl::StatusOr<std::unique_ptr<PutWriter>> ServedBlobs::BeginPut(
    const MerkleParams& params, const std::optional<ParsedDigest>& expected,
    std::optional<uint64_t> size) {
  return store_->BeginPut(params, expected, size);
}

absl::StatusOr<PutResult> ServedBlobs::CommitPut(PutWriter& writer,
                                                 const PutCommit& commit) {
  absl::StatusOr<PutResult> result = writer.Commit(commit);
  if (!result.ok()) {
    // The content may be stored even so (recording the name failed).
    if (commit.expected.has_value()) cache_.Erase(*commit.expected);
    return result;
  }
  if (!result->already_present || !commit.fsverity_signature.empty()) {
    ASSIGN_OR_RETURN(const ParsedDigest digest,
                     ParseDigest(result->info.digest));
    cache_.Erase(digest);
  }
  return result;
}

std::vector<absl::StatusOr<PutResult>> ServedBlobs::PutBatch(
    absl::Span<const BatchPut> blobs) {
  std::vector<absl::StatusOr<PutResult>> results = store_->PutBatch(blobs);
  for (size_t i = 0; i < blobs.size(); ++i) {
    if (!results[i].ok() || !results[i]->already_present) {
      cache_.Erase(blobs[i].digest);
    }
  }
  return results;
}

absl::StatusOr<BlobInfo> ServedBlobs::SetName(const ParsedDigest& digest,
                                              const NameWrite& write) {
  return store_->SetName(digest, write);
}

absl::Status ServedBlobs::DeleteBlob(const ParsedDigest& digest) {
  absl::Status deleted = store_->DeleteBlob(digest);
  cache_.Erase(digest);
  return deleted;
}

absl::StatusOr<std::vector<ParsedDigest>> ServedBlobs::DeleteUnusedSince(
    absl::Span<const ParsedDigest> blobs, absl::Time cutoff) {
  absl::StatusOr<std::vector<ParsedDigest>> deleted =
      store_->DeleteUnusedSince(blobs, cutoff);
  for (const ParsedDigest& digest : deleted.ok() ? *deleted : blobs) {
    cache_.Erase(digest);
  }
  return deleted;
}

absl::Status ServedBlobs::DeleteName(absl::string_view name) {
  return store_->DeleteName(name);
}

absl::Status ServedBlobs::Quarantine(const ParsedDigest& digest,
                                     absl::string_view reason) {
  absl::Status quarantined = store_->Quarantine(digest, reason);
  cache_.Erase(digest);
  return quarantined;
}

}  // namespace verity::server
