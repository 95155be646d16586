// Implements RunFetch.

#include "client/sdk/fetch_runner.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "client/sdk/parallel_fetch.h"
#include "lib/read_plan.h"
#include "lib/status_macros.h"

namespace verity::client {
namespace {

// One resumable stream; the sink learns the size from its first message.
absl::Status FetchOne(const FetchPlan& plan, std::shared_ptr<SharedTree> tree,
                      uint64_t begin, std::optional<uint64_t> end,
                      sdk::Sink& sink) {
  RangeSink range;
  range.start = [&sink, begin](uint64_t range_end) {
    return sink.Start(range_end - begin);
  };
  range.write = [&sink, begin](uint64_t offset,
                               absl::Span<const uint8_t> data) {
    return sink.Write(offset - begin, data);
  };
  return FetchRange(plan, std::move(tree), begin, end, range);
}

absl::Status FetchInto(const FetchPlan& plan, const sdk::FetchOptions& options,
                       const DescribeFn& describe, sdk::Sink& sink) {
  RETURN_IF_ERROR(ValidateFetchOptions(options));
  const uint64_t begin = options.offset;
  // A zero length cannot be asked for: the protocol reads it as "to the end".
  const bool empty = options.length.has_value() && *options.length == 0;
  if (options.parallel_streams == 1 && !empty) {
    std::optional<uint64_t> end;
    if (options.length.has_value()) end = begin + *options.length;
    return FetchOne(plan, plan.target.cache->Find(plan.target.trusted), begin,
                    end, sink);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<SharedTree> tree, describe());
  const TreeGeometry& geometry = tree->geometry();
  ASSIGN_OR_RETURN(const ByteRange range,
                   CheckByteRange(geometry.data_size(), begin, options.length));
  const std::vector<Part> parts = SplitRange(
      begin, range.end, geometry.block_size(), options.parallel_streams);
  if (parts.empty()) return sink.Start(0);
  if (parts.size() == 1) return FetchOne(plan, tree, begin, range.end, sink);
  return FetchParts(plan, std::move(tree), parts, sink);
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
  absl::Status status = FetchInto(plan, options, describe, sink);
  if (status.ok()) status = sink.Finish();
  if (!status.ok()) sink.Abort();
  return status;
}

}  // namespace verity::client
