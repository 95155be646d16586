// Runs a function over the indices of many independent items (files to hash,
// upload or fetch) on a few threads, stopping at the first failure.

#ifndef VERITYD_LIB_BASE_PARALLEL_FOR_H_
#define VERITYD_LIB_BASE_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>

#include "absl/status/status.h"

namespace verity {

// Calls `fn(i)` once for each i in [0, n) on up to `threads` threads (the
// caller's among them), handing out indices in order. After a call fails no
// further index is handed out; the calls already running finish, and the
// failure of the lowest index among those that failed is returned. OK if
// every call succeeded.
absl::Status ParallelFor(size_t n, int threads,
                         const std::function<absl::Status(size_t)>& fn);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_PARALLEL_FOR_H_
