// A resumable read of one contiguous range: Read RPCs in a row, each starting
// at the first byte not yet verified, with bounded retries and backoff.

#ifndef VERITYD_CLIENT_SDK_RANGE_FETCH_H_
#define VERITYD_CLIENT_SDK_RANGE_FETCH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "client/sdk/cancellation.h"
#include "client/sdk/stream_attempt.h"
#include "client/sdk/tree_cache.h"
#include "verity/options.h"

namespace verity::client {

// What the ranges of one fetch share. Not owned; outlives the fetch.
struct FetchPlan {
  ReadTarget target;
  sdk::RetryPolicy retry;
  absl::Duration rpc_timeout = absl::ZeroDuration();  // per attempt; 0: none
  absl::Time deadline = absl::InfiniteFuture();       // the whole fetch
  Cancellation* cancellation = nullptr;
};

// Receives one range's verified bytes.
struct RangeSink {
  // If set, called once with the range's end offset in the blob, before the
  // first write (or at the end, for an empty range).
  std::function<absl::Status(uint64_t end)> start;
  PositionedSink write;
};

// Fetches blob bytes [begin, *end), or [begin, end of blob) without `end`
// (which must then be past `begin`). `tree` is the blob's shared tree, or
// null to learn it from the first message. Transport failures are retried
// per plan.retry, each attempt resuming where the last one stopped; a
// failure after every byte was delivered counts as success. Returns the
// cancellation's reason once plan.cancellation is cancelled.
absl::Status FetchRange(const FetchPlan& plan, std::shared_ptr<SharedTree> tree,
                        uint64_t begin, std::optional<uint64_t> end,
                        const RangeSink& sink);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_RANGE_FETCH_H_
