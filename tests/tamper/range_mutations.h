// Test-only: mutations that send data past the requested range, cut from a
// stream that read further than the client asked.

#ifndef VERITYD_TESTS_TAMPER_RANGE_MUTATIONS_H_
#define VERITYD_TESTS_TAMPER_RANGE_MUTATIONS_H_

#include "proto/verity/v1/verity.pb.h"
#include "tests/tamper/stream_layout.h"

namespace verity::tamper {

// `stream` is the reply to `request` with its length cleared (to the end of
// the blob). Cuts it back to the blocks `request` covers plus one more: the
// next genuine block, or, when the range ends at the end of the blob, a
// copy of the first block placed after it. The extra block goes in a
// message of its own, or with `extend_last_chunk` at the end of the last
// chunk. Not applied for an empty range.
TamperOutcome AddBlockBeyondRange(const v1::ReadRequest& request,
                                  const StreamLayout& layout,
                                  bool extend_last_chunk, ReadStream* stream);

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_RANGE_MUTATIONS_H_
