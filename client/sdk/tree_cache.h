// The client's cache of verified Merkle tree blocks, one tree per blob,
// shared by every stream that reads the blob, so that repeated and parallel
// reads neither refetch nor rehash the blocks they need.

#ifndef VERITYD_CLIENT_SDK_TREE_CACHE_H_
#define VERITYD_CLIENT_SDK_TREE_CACHE_H_

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "lib/descriptor.h"
#include "lib/merkle_verifier.h"

namespace verity::client {

// One blob's verified tree. The MerkleVerifier is shared by the streams
// reading the blob: hold mu() shared to read or verify data against it, and
// exclusively to add tree blocks. Never call out of the SDK with mu() held.
// Thread-safe as described; owned jointly by the cache and the readers.
class SharedTree {
 public:
  SharedTree(std::string key, MerkleVerifier verifier)
      : key_(std::move(key)),
        verifier_(std::make_shared<MerkleVerifier>(std::move(verifier))) {}

  SharedTree(const SharedTree&) = delete;
  SharedTree& operator=(const SharedTree&) = delete;

  absl::Mutex& mu() const ABSL_LOCK_RETURNED(mu_) { return mu_; }
  const std::shared_ptr<MerkleVerifier>& verifier() const { return verifier_; }
  // Immutable; no lock needed.
  const TreeGeometry& geometry() const { return verifier_->geometry(); }
  const std::string& key() const { return key_; }

 private:
  const std::string key_;
  mutable absl::Mutex mu_;
  const std::shared_ptr<MerkleVerifier> verifier_ ABSL_PT_GUARDED_BY(mu_);
};

// Verified trees by digest, bounded by bytes and evicting the least recently
// used. A tree evicted while streams use it stays alive for them. Thread-safe.
class TreeCache {
 public:
  // Memory charged for a tree besides its blocks, and per block.
  static constexpr uint64_t kTreeOverheadBytes = 1024;
  static constexpr uint64_t kBlockOverheadBytes = 64;

  explicit TreeCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // The tree cached for `digest`, or null.
  std::shared_ptr<SharedTree> Find(const ParsedDigest& digest)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The tree cached for `digest` if there is one; otherwise caches a new one
  // made of `verifier`, which must be for `digest`.
  std::shared_ptr<SharedTree> FindOrInsert(const ParsedDigest& digest,
                                           MerkleVerifier verifier)
      ABSL_LOCKS_EXCLUDED(mu_);

  // `tree` gained `blocks` verified tree blocks; may evict trees. Ignored
  // for a tree no longer cached.
  void Grew(const SharedTree& tree, uint64_t blocks) ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    std::shared_ptr<SharedTree> tree;
    uint64_t bytes = 0;
  };
  using Lru = std::list<Entry>;  // most recently used first

  static std::string KeyOf(const ParsedDigest& digest);
  std::shared_ptr<SharedTree> TouchLocked(Lru::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const uint64_t capacity_;
  mutable absl::Mutex mu_;
  Lru lru_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Lru::iterator> index_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_TREE_CACHE_H_
