// The limits of the verity.v1 calls (docs/protocol.md): verityd refuses a
// call over them (INVALID_ARGUMENT), and the SDK splits its calls to fit.
// Defined once, here, for both.

#ifndef VERITYD_PROTO_LIMITS_H_
#define VERITYD_PROTO_LIMITS_H_

#include <cstddef>
#include <cstdint>

#include "lib/tree/read_plan.h"

namespace verity::v1 {

// The most digests one FindMissing call asks about.
inline constexpr size_t kMaxFindMissingDigests = 10000;

// The most blobs, and data bytes of all of them, one BatchRead reads.
inline constexpr size_t kMaxBatchReadBlobs = 1000;
inline constexpr uint64_t kMaxBatchReadBytes = uint64_t{4} << 20;
// The largest blob one BatchRead reads, of 4 KiB blocks (its data blocks
// total at most ReadSmall's limit).
inline constexpr uint64_t kMaxBatchReadBlobBytes = kMaxSmallReadBytes;

// The most blobs, and data bytes of all of them, one BatchUpdate stores, and
// the largest blob it takes (a larger one is sent with Put).
inline constexpr size_t kMaxBatchUpdateBlobs = 1000;
inline constexpr uint64_t kMaxBatchUpdateBytes = uint64_t{4} << 20;
inline constexpr uint64_t kMaxBatchUpdateBlobBytes = uint64_t{1} << 20;

}  // namespace verity::v1

#endif  // VERITYD_PROTO_LIMITS_H_
