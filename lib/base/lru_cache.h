// Shared entries by key, least recently used out first, within a byte budget:
// the one cache of the server (blobs kept open with their verified trees; the
// bytes of a remote store's blobs) and of the SDK (a tree shared by every
// stream of a blob), so repeated and parallel reads neither refetch nor rehash
// what they need.

#ifndef VERITYD_LIB_BASE_LRU_CACHE_H_
#define VERITYD_LIB_BASE_LRU_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace verity {

struct LruCacheOptions {
  // The entries' cached_bytes() together; beyond it the least recently used
  // go, down to none (an entry larger than the budget is not kept).
  uint64_t max_bytes = uint64_t{64} << 20;
  // The most entries kept, whatever their size (for entries that hold file
  // descriptors, say).
  size_t max_entries = SIZE_MAX;
};

// Entries are T, shared: `KeyOf` gives an entry's (hashable) key, and `T` has
// a thread-safe `uint64_t cached_bytes() const` (VerifiedTree has one, and
// lib/tree's DigestKeyOf keys it by digest). An
// entry evicted while someone holds it stays alive for them, and is then no
// longer charged. Thread-safe.
template <typename T, typename KeyOf>
class LruCache {
 public:
  using Key = typename KeyOf::Key;

  explicit LruCache(LruCacheOptions options) : options_(options) {}

  LruCache(const LruCache&) = delete;
  LruCache& operator=(const LruCache&) = delete;

  // The entry cached for `key`, or null.
  std::shared_ptr<T> Find(const Key& key) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    return Touch(it->second);
  }

  // Caches `entry`, unless one for its key is cached already: that one is
  // returned instead, so every caller shares the first.
  std::shared_ptr<T> Insert(std::shared_ptr<T> entry) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return InsertLocked(std::move(entry));
  }

  // Find(), or else `create()` (a StatusOr<std::shared_ptr<T>>, called
  // without the lock, so a slow open does not stall other lookups) and
  // Insert(). If `key` was erased while create() ran, what it made may
  // predate the erasure (a blob opened just before it was deleted): it is
  // returned to this caller only, uncached, so that no later lookup finds it.
  template <typename Create>
  absl::StatusOr<std::shared_ptr<T>> FindOrCreate(const Key& key, Create create)
      ABSL_LOCKS_EXCLUDED(mu_) {
    uint64_t erasures_seen = 0;
    {
      absl::MutexLock lock(&mu_);
      if (auto it = index_.find(key); it != index_.end()) {
        return Touch(it->second);
      }
      Creating& creating = creating_[key];
      ++creating.creators;
      erasures_seen = creating.erasures;
    }
    absl::StatusOr<std::shared_ptr<T>> created = create();
    absl::MutexLock lock(&mu_);
    if (!EndCreating(key, erasures_seen) || !created.ok()) return created;
    return InsertLocked(*std::move(created));
  }

  // Charges `entry` its cached_bytes() now and evicts while over budget: call
  // after it grew. Nothing happens if `entry` is not (or no longer) cached.
  void Update(const T& entry) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(KeyOf()(entry));
    // One cached after `entry` was evicted is another object.
    if (it == index_.end() || it->second->value.get() != &entry) return;
    const uint64_t charge = entry.cached_bytes();
    bytes_ = bytes_ - it->second->charged + charge;
    it->second->charged = charge;
    Touch(it->second);
    Evict();
  }

  // Drops the entry for `key`, if any; one that FindOrCreate() is creating
  // for it meanwhile is not cached either.
  void Erase(const Key& key) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (auto creating = creating_.find(key); creating != creating_.end()) {
      ++creating->second.erasures;
    }
    auto it = index_.find(key);
    if (it == index_.end()) return;
    bytes_ -= it->second->charged;
    lru_.erase(it->second);
    index_.erase(it);
  }

  uint64_t bytes() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return bytes_;
  }

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return index_.size();
  }

 private:
  struct Entry {
    std::shared_ptr<T> value;
    uint64_t charged = 0;  // cached_bytes() when last settled
  };
  using Lru = std::list<Entry>;  // most recently used first
  // FindOrCreate() calls whose create() is running for one key, and the
  // Erase() calls of that key since the first of them began; dropped when
  // the last ends, so it holds only keys being created.
  struct Creating {
    int creators = 0;
    uint64_t erasures = 0;
  };

  std::shared_ptr<T> InsertLocked(std::shared_ptr<T> entry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (auto it = index_.find(KeyOf()(*entry)); it != index_.end()) {
      return Touch(it->second);
    }
    const uint64_t charge = entry->cached_bytes();
    lru_.push_front({entry, charge});
    index_.emplace(KeyOf()(*entry), lru_.begin());
    bytes_ += charge;
    Evict();
    return entry;
  }

  // Ends one create() for `key` that began when its erasures were
  // `erasures_seen`: false if `key` was erased since.
  bool EndCreating(const Key& key, uint64_t erasures_seen)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = creating_.find(key);
    const bool erased = it->second.erasures != erasures_seen;
    if (--it->second.creators == 0) creating_.erase(it);
    return !erased;
  }

  std::shared_ptr<T> Touch(typename Lru::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    lru_.splice(lru_.begin(), lru_, it);
    return it->value;
  }

  void Evict() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!lru_.empty() && (bytes_ > options_.max_bytes ||
                             lru_.size() > options_.max_entries)) {
      const Entry& victim = lru_.back();
      bytes_ -= victim.charged;
      index_.erase(KeyOf()(*victim.value));
      lru_.pop_back();
    }
  }

  const LruCacheOptions options_;
  mutable absl::Mutex mu_;
  Lru lru_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Key, typename Lru::iterator> index_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<Key, Creating> creating_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity

#endif  // VERITYD_LIB_BASE_LRU_CACHE_H_
