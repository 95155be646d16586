// Turns one Fetch call into streams: checks the range, chooses one
// resumable stream or parallel parts, and settles the sink (Finish on
// success, Abort on failure).

#ifndef VERITYD_CLIENT_SDK_FETCH_RUNNER_H_
#define VERITYD_CLIENT_SDK_FETCH_RUNNER_H_

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/sdk/range_fetch.h"
#include "lib/tree/verified_tree.h"
#include "verity/options.h"
#include "verity/sink.h"

namespace verity::client {

// The blob's tree, authenticated: from the cache, or from a Stat whose
// descriptor hashes to the trusted digest.
using DescribeFn =
    std::function<absl::StatusOr<std::shared_ptr<VerifiedTree>>()>;

// INVALID_ARGUMENT for a range that overflows or a bad parallel_streams.
absl::Status ValidateFetchOptions(const sdk::FetchOptions& options);

// Runs the fetch `options` describes. One stream needs no description of
// the blob (its first message has it); `describe` is called only to split a
// range into parts or to check an empty one.
absl::Status RunFetch(const FetchPlan& plan, const sdk::FetchOptions& options,
                      const DescribeFn& describe, sdk::Sink& sink);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_FETCH_RUNNER_H_
