// Test-only: mutations that damage bytes of a Read stream (data, tree blocks,
// the descriptor) and leave its shape alone.

#ifndef VERITYD_TESTS_TAMPER_CONTENT_MUTATIONS_H_
#define VERITYD_TESTS_TAMPER_CONTENT_MUTATIONS_H_

#include "tests/tamper/stream_layout.h"
#include "tests/tamper/tamper.h"

namespace verity::tamper {

// Each takes the layout of `stream` and returns what it did; not applied
// (and `stream` unchanged) if the stream lacks what it damages.
TamperOutcome FlipDataBit(const StreamLayout& layout, ReadStream* stream);
TamperOutcome SwapDataBlocks(const StreamLayout& layout, ReadStream* stream);
TamperOutcome FlipTreeBit(const StreamLayout& layout, int level,
                          ReadStream* stream);
TamperOutcome DropTreeBlocks(ReadStream* stream);
TamperOutcome FlipDescriptor(DescriptorField field, ReadStream* stream);

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_CONTENT_MUTATIONS_H_
