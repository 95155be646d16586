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
#include "client/sdk/fetch_writer.h"
#include "client/sdk/stream_attempt.h"
#include "lib/tree/verified_tree.h"
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

// Fetches blob bytes [begin, *end), or [begin, end of blob) without `end`
// (which must then be past `begin`), into `writer` as part `part`, starting
// the writer with the range's end once it is known (at the latest when the
// range ends). `tree` is the blob's shared tree, or null to learn it from the
// first message. Transport failures are retried per plan.retry, each attempt
// resuming where the last one stopped; a failure after every byte was
// delivered counts as success. Returns the cancellation's reason once
// plan.cancellation is cancelled.
absl::Status FetchRange(const FetchPlan& plan,
                        std::shared_ptr<VerifiedTree> tree, uint64_t begin,
                        std::optional<uint64_t> end, FetchWriter& writer,
                        int part = 0);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_RANGE_FETCH_H_
