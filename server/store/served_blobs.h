// The blobs the server serves: the Store, and the cache of those open for
// reading with their verified trees. Every read opens through it and every
// change that ends or replaces a blob's service (a Put's commit, a delete, a
// quarantine) goes through it, so that it alone decides when cached blobs go.

#ifndef VERITYD_SERVER_STORE_SERVED_BLOBS_H_
#define VERITYD_SERVER_STORE_SERVED_BLOBS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/base/lru_cache.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "server/store/store.h"
#include "server/store/verified_blob.h"

namespace verity::server {

// The blobs the server has open, with their verified trees: see LruCache. A
// stream that holds a blob keeps it alive.
using VerifiedBlobCache = LruCache<VerifiedBlob, DigestKeyOf<VerifiedBlob>>;

// What the server's VerifiedBlobCache keeps.
struct VerifiedBlobCacheOptions {
  // Most blobs kept open: each holds two file descriptors.
  size_t max_blobs = 1024;
  // Verified tree bytes kept across all cached blobs.
  uint64_t max_tree_bytes = uint64_t{256} << 20;
};

LruCacheOptions CacheOptionsOf(const VerifiedBlobCacheOptions& options);

// Thread-safe. Does not own the store, which must outlive it. Blocking calls
// (those of the store, and Open() of a remote store's blob) are the caller's
// to keep off threads that must not wait.
//
// A blob leaves the cache only after the store stopped serving it, and an open
// that overlapped that is not cached (LruCache::FindOrCreate): once
// Quarantine() or DeleteBlob() succeeds, no read opens the old copy again.
// Readers that hold it already finish with it, each block still verified.
class ServedBlobs {
 public:
  // `verify_once`: see VerifiedBlob::Create; forgotten when a blob leaves the
  // cache.
  ServedBlobs(Store* store, const VerifiedBlobCacheOptions& cache,
              bool verify_once);

  ServedBlobs(const ServedBlobs&) = delete;
  ServedBlobs& operator=(const ServedBlobs&) = delete;

  // What does not change what is served: names, Stat, List, health, the log.
  const Store& store() const { return *store_; }

  // The blob `digest`, cached or opened from the store (and cached): NOT_FOUND
  // and DATA_LOSS as the store and VerifiedBlob::Create report them.
  absl::StatusOr<std::shared_ptr<VerifiedBlob>> Open(
      const ParsedDigest& digest);

  // Charges `blob` its grown verified tree; call after reading it.
  void Update(const VerifiedBlob& blob);

  // Store::BeginPut. Commit what it returns with CommitPut().
  absl::StatusOr<std::unique_ptr<PutWriter>> BeginPut(
      const MerkleParams& params, const std::optional<ParsedDigest>& expected,
      std::optional<uint64_t> size = std::nullopt);

  // PutWriter::Commit; new content for a digest drops its cached blob, which
  // may be a copy quarantined elsewhere (another replica of a shared store),
  // and so does a new signature (a cached blob keeps the one it opened with).
  // A commit that fails drops the blob commit.expected, if given: the
  // content may be stored even so.
  absl::StatusOr<PutResult> CommitPut(PutWriter& writer,
                                      const PutCommit& commit);

  // Store::PutBatch; each blob's cached copy is dropped unless the store
  // found it stored already (a failed blob's too: it may be stored even so).
  std::vector<absl::StatusOr<PutResult>> PutBatch(
      absl::Span<const BatchPut> blobs);

  // Store::SetName. The cache is by digest: nothing of it goes.
  absl::StatusOr<BlobInfo> SetName(const ParsedDigest& digest,
                                   const NameWrite& write);

  // Store::DeleteBlob, then the cached blob goes (whatever the store said:
  // what it did not delete is opened again from it).
  absl::Status DeleteBlob(const ParsedDigest& digest);

  // Store::DeleteUnusedSince, then the cached blobs go: those deleted (all
  // of them, if it failed midway).
  absl::StatusOr<std::vector<ParsedDigest>> DeleteUnusedSince(
      absl::Span<const ParsedDigest> blobs, absl::Time cutoff);

  // Store::DeleteName. The cache is by digest: nothing of it goes.
  absl::Status DeleteName(absl::string_view name);

  // Store::Quarantine, then the cached blob goes (whatever the store said: a
  // blob found corrupt is opened and verified afresh).
  absl::Status Quarantine(const ParsedDigest& digest, absl::string_view reason);

 private:
  Store* const store_;
  const bool verify_once_;
  VerifiedBlobCache cache_;  // thread-safe itself
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_SERVED_BLOBS_H_
