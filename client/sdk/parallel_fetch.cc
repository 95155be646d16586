// Implements SplitRange and FetchParts: one thread per part beyond the
// first, which runs on the caller's thread.

#include "client/sdk/parallel_fetch.h"

#include <algorithm>
#include <thread>

#include "lib/base/status_macros.h"

namespace verity::client {

std::vector<Part> SplitRange(uint64_t begin, uint64_t end, uint32_t block_size,
                             int max_parts) {
  if (begin >= end) return {};
  const uint64_t first_block = begin / block_size;
  const uint64_t blocks = (end - 1) / block_size + 1 - first_block;
  const uint64_t count = std::min<uint64_t>(
      blocks, static_cast<uint64_t>(std::clamp(max_parts, 1, kMaxParts)));
  std::vector<Part> parts;
  for (uint64_t i = 0; i < count; ++i) {
    // Cannot overflow: fewer than 2^57 blocks (64-byte blocks, the smallest
    // a tree allows, of under 2^63 bytes) times at most 64.
    const uint64_t from = first_block + i * blocks / count;
    const uint64_t to = first_block + (i + 1) * blocks / count;
    parts.push_back(
        {std::max(begin, from * block_size), std::min(end, to * block_size)});
  }
  return parts;
}

absl::Status FetchParts(const FetchPlan& plan,
                        std::shared_ptr<VerifiedTree> tree,
                        const std::vector<Part>& parts, FetchWriter& writer) {
  writer.SplitInto(static_cast<int>(parts.size()));
  RETURN_IF_ERROR(writer.Start(parts.back().end));
  const auto run_part = [&](int i) {
    absl::Status status =
        FetchRange(plan, tree, parts[i].begin, parts[i].end, writer, i);
    if (status.ok()) status = writer.FinishPart(i);
    if (!status.ok()) {
      plan.cancellation->Cancel(status);
      writer.Abort(status);
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < parts.size(); ++i) threads.emplace_back(run_part, i);
  run_part(0);
  for (std::thread& thread : threads) thread.join();
  return plan.cancellation->status();
}

}  // namespace verity::client
