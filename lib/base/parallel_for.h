// Runs a function over the indices of many independent items (files to hash,
// upload or fetch, blobs to look up) on a few threads, or on an executor's,
// stopping at the first failure.

#ifndef VERITYD_LIB_BASE_PARALLEL_FOR_H_
#define VERITYD_LIB_BASE_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>

#include "absl/status/status.h"
#include "lib/base/executor.h"

namespace verity {

// Calls `fn(i)` once for each i in [0, n) on up to `threads` threads (the
// caller's among them), handing out indices in order. After a call fails no
// further index is handed out; the calls already running finish, and the
// failure of the lowest index among those that failed is returned. OK if
// every call succeeded.
absl::Status ParallelFor(size_t n, int threads,
                         const std::function<absl::Status(size_t)>& fn);

// The same on `executor`'s threads (shared with other callers: what all of
// them run at once is bounded by its threads, not by their number), at most
// `window` calls of this one at a time, the caller's thread among them.
// Returns once every call ended; the caller must not be one of `executor`'s
// threads.
absl::Status ParallelFor(Executor& executor, size_t n, int window,
                         const std::function<absl::Status(size_t)>& fn);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_PARALLEL_FOR_H_
