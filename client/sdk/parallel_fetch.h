// A range split over concurrent streams: the split itself, and the fetch of
// the parts, each over its own resumable stream, into one writer.

#ifndef VERITYD_CLIENT_SDK_PARALLEL_FETCH_H_
#define VERITYD_CLIENT_SDK_PARALLEL_FETCH_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "client/sdk/fetch_writer.h"
#include "client/sdk/range_fetch.h"
#include "lib/tree/verified_tree.h"

namespace verity::client {

// Blob bytes [begin, end). Plain value.
struct Part {
  uint64_t begin = 0;
  uint64_t end = 0;
};

inline constexpr int kMaxParts = 64;

// Cuts [begin, end) into at most `max_parts` (at most kMaxParts) contiguous
// parts of nearly equal whole numbers of blocks, so no block is read twice; the
// first part starts at `begin` and the last ends at `end`. Empty for an empty
// range.
std::vector<Part> SplitRange(uint64_t begin, uint64_t end, uint32_t block_size,
                             int max_parts);

// Splits `writer` into the parts, starts it with the total size, then fetches
// `parts` (contiguous, non-empty, in order) over one resumable stream each,
// concurrently. The first failure cancels the other parts and is returned.
// Leaves settling the writer to the caller.
absl::Status FetchParts(const FetchPlan& plan,
                        std::shared_ptr<VerifiedTree> tree,
                        const std::vector<Part>& parts, FetchWriter& writer);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_PARALLEL_FETCH_H_
