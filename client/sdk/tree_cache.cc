// Implements TreeCache: a list in recency order plus an index into it. A
// tree's charge grows as streams verify its blocks and is settled here.

#include "client/sdk/tree_cache.h"

#include <utility>

namespace verity::client {

std::string TreeCache::KeyOf(const ParsedDigest& digest) {
  std::string key(1, static_cast<char>(digest.algorithm));
  return key + digest.digest;
}

std::shared_ptr<SharedTree> TreeCache::Find(const ParsedDigest& digest) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(KeyOf(digest));
  if (it == index_.end()) return nullptr;
  return TouchLocked(it->second);
}

std::shared_ptr<SharedTree> TreeCache::FindOrInsert(const ParsedDigest& digest,
                                                    MerkleVerifier verifier) {
  std::string key = KeyOf(digest);
  absl::MutexLock lock(&mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    return TouchLocked(it->second);
  }
  auto tree = std::make_shared<SharedTree>(key, std::move(verifier));
  lru_.push_front({tree, kTreeOverheadBytes});
  index_.emplace(std::move(key), lru_.begin());
  bytes_ += kTreeOverheadBytes;
  EvictLocked();
  return tree;
}

void TreeCache::Grew(const SharedTree& tree, uint64_t blocks) {
  if (blocks == 0) return;
  const uint64_t added =
      blocks * (tree.geometry().block_size() + kBlockOverheadBytes);
  absl::MutexLock lock(&mu_);
  auto it = index_.find(tree.key());
  // A tree with the same key cached after this one was evicted is another
  // object, with its own charge.
  if (it == index_.end() || it->second->tree.get() != &tree) return;
  it->second->bytes += added;
  bytes_ += added;
  TouchLocked(it->second);
  EvictLocked();
}

uint64_t TreeCache::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

uint64_t TreeCache::size() const {
  absl::MutexLock lock(&mu_);
  return index_.size();
}

std::shared_ptr<SharedTree> TreeCache::TouchLocked(Lru::iterator it) {
  lru_.splice(lru_.begin(), lru_, it);
  return it->tree;
}

void TreeCache::EvictLocked() {
  while (bytes_ > capacity_ && !lru_.empty()) {
    const Entry& victim = lru_.back();
    bytes_ -= victim.bytes;
    index_.erase(victim.tree->key());
    lru_.pop_back();
  }
}

}  // namespace verity::client
