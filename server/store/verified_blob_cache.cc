// Implements VerifiedBlobCache: a mutex-guarded LRU list with a hash index.
// Opening a blob on a miss happens outside the lock, so a slow disk does not
// stall hits on other blobs.

#include "server/store/verified_blob_cache.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"

namespace verity::server {
namespace {

std::string Key(const ParsedDigest& digest) {
  return absl::StrCat(static_cast<int>(digest.algorithm), ":", digest.digest);
}

}  // namespace

absl::StatusOr<std::shared_ptr<VerifiedBlob>> VerifiedBlobCache::Get(
    const ParsedDigest& digest) {
  const std::string key = Key(digest);
  {
    absl::MutexLock lock(&mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob, store_->OpenBlob(digest));
  ASSIGN_OR_RETURN(std::shared_ptr<VerifiedBlob> verified,
                   VerifiedBlob::Create(std::move(blob), options_.verify_once));
  absl::MutexLock lock(&mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    return it->second->second;  // another stream opened it meanwhile
  }
  lru_.emplace_front(key, verified);
  index_[key] = lru_.begin();
  EvictOverBudget();
  return verified;
}

void VerifiedBlobCache::Invalidate(const ParsedDigest& digest) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(Key(digest));
  if (it == index_.end()) return;
  lru_.erase(it->second);
  index_.erase(it);
}

void VerifiedBlobCache::EvictOverBudget() {
  uint64_t tree_bytes = 0;
  for (const auto& entry : lru_)
    tree_bytes += entry.second->cached_tree_bytes();
  while (lru_.size() > 1 && (lru_.size() > options_.max_blobs ||
                             tree_bytes > options_.max_tree_bytes)) {
    tree_bytes -= std::min(tree_bytes, lru_.back().second->cached_tree_bytes());
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

}  // namespace verity::server
