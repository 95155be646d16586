// A slab: one fixed-size, aligned piece of a blob's data or tree, the unit a
// remote store's bytes are fetched and cached in (the last slab of a part may
// be shorter).

#ifndef VERITYD_SERVER_STORE_CACHE_SLAB_H_
#define VERITYD_SERVER_STORE_CACHE_SLAB_H_

#include <cstdint>
#include <string>
#include <utility>

#include "lib/base/buffer_pool.h"
#include "lib/tree/descriptor.h"
#include "server/store/store.h"

namespace verity::server {

// Which slab: bytes [index * slab_bytes, ...) of one part of one blob. Plain
// value.
struct SlabKey {
  ParsedDigest digest;
  BlobPart part = BlobPart::kData;
  uint64_t index = 0;

  // "sha256-<hex>.data.<index>": a file name, and a name for logs.
  std::string ToString() const;

  friend bool operator==(const SlabKey& a, const SlabKey& b) {
    return a.index == b.index && a.part == b.part && a.digest == b.digest;
  }
  template <typename H>
  friend H AbslHashValue(H h, const SlabKey& key) {
    return H::combine(std::move(h), key.digest, key.part, key.index);
  }
};

// A slab's bytes, as fetched: unverified. Immutable once cached.
struct Slab {
  SlabKey key;
  Buffer bytes;

  uint64_t cached_bytes() const { return bytes.size(); }
};

// LruCache's key of a slab (or of anything with a `key` member).
template <typename T>
struct SlabKeyOf {
  using Key = SlabKey;
  const SlabKey& operator()(const T& entry) const { return entry.key; }
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_CACHE_SLAB_H_
