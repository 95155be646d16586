// Keeps recently read blobs open with their verified tree blocks, so repeated
// reads of a blob neither reopen its files nor rehash its tree.

#ifndef VERITYD_SERVER_STORE_VERIFIED_BLOB_CACHE_H_
#define VERITYD_SERVER_STORE_VERIFIED_BLOB_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/descriptor.h"
#include "server/store/blob_store.h"
#include "server/store/verified_blob.h"

namespace verity::server {

struct VerifiedBlobCacheOptions {
  // Most blobs kept open: each holds two file descriptors.
  size_t max_blobs = 1024;
  // Verified tree bytes kept across all cached blobs. Checked when a blob is
  // added, so a blob whose tree grows afterwards may overshoot until the next
  // miss.
  uint64_t max_tree_bytes = uint64_t{256} << 20;
  // Blobs remember which data blocks they verified and skip hashing them again
  // (see VerifiedBlob::Create); forgotten when a blob is evicted.
  bool verify_once = false;
};

// Thread-safe. Evicts least recently used blobs; a stream that holds a blob
// keeps it alive.
class VerifiedBlobCache {
 public:
  VerifiedBlobCache(const BlobStore* store, VerifiedBlobCacheOptions options)
      : store_(store), options_(options) {}

  // The blob with `digest`, opened from the store on a miss (NOT_FOUND,
  // DATA_LOSS as the store and VerifiedBlob::Create report them).
  absl::StatusOr<std::shared_ptr<VerifiedBlob>> Get(const ParsedDigest& digest)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Drops the blob, after it was deleted, replaced or quarantined.
  void Invalidate(const ParsedDigest& digest) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  using Lru = std::list<std::pair<std::string, std::shared_ptr<VerifiedBlob>>>;

  void EvictOverBudget() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const BlobStore* const store_;
  const VerifiedBlobCacheOptions options_;
  absl::Mutex mu_;
  Lru lru_ ABSL_GUARDED_BY(mu_);  // most recently used first
  absl::flat_hash_map<std::string, Lru::iterator> index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_VERIFIED_BLOB_CACHE_H_
