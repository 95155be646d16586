// Implements RunFetch.

#include "client/sdk/fetch_runner.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/sdk/fetch_writer.h"
#include "client/sdk/parallel_fetch.h"
#include "lib/base/status_macros.h"
#include "lib/tree/read_plan.h"

namespace verity::client {
namespace {

absl::Status FetchInto(const FetchPlan& plan, const sdk::FetchOptions& options,
                       const DescribeFn& describe, FetchWriter& writer) {
  RETURN_IF_ERROR(ValidateFetchOptions(options));
  const uint64_t begin = options.offset;
  // A zero length cannot be asked for: the protocol reads it as "to the end".
  const bool empty = options.length.has_value() && *options.length == 0;
  if (options.parallel_streams == 1 && !empty) {
    // One resumable stream; the writer learns the size from its first message.
    std::optional<uint64_t> end;
    if (options.length.has_value()) end = begin + *options.length;
    return FetchRange(plan, plan.target.cache->Find(plan.target.trusted), begin,
                      end, writer);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<VerifiedTree> tree, describe());
  const TreeGeometry& geometry = tree->geometry();
  ASSIGN_OR_RETURN(const ByteRange range,
                   CheckByteRange(geometry.data_size(), begin, options.length));
  const std::vector<Part> parts = SplitRange(
      begin, range.end, geometry.block_size(), options.parallel_streams);
  if (parts.empty()) return writer.Start(begin);
  if (parts.size() == 1) {
    return FetchRange(plan, std::move(tree), begin, range.end, writer);
  }
  return FetchParts(plan, std::move(tree), parts, writer);
}

}  // namespace

absl::Status ValidateFetchOptions(const sdk::FetchOptions& options) {
  if (options.parallel_streams < 1 || options.parallel_streams > kMaxParts) {
    return absl::InvalidArgumentError(
        absl::StrCat("parallel_streams must be from 1 to ", kMaxParts, ", not ",
                     options.parallel_streams));
  }
  return ValidateRange(options.offset, options.length);
}

absl::Status RunFetch(const FetchPlan& plan, const sdk::FetchOptions& options,
                      const DescribeFn& describe, sdk::Sink& sink) {
  FetchWriter writer(sink, options.offset);
  return writer.Settle(FetchInto(plan, options, describe, writer));
}

}  // namespace verity::client
