// Test-only: mutations that change a Read stream's shape (which messages, in
// what order, at what offsets) and leave every byte genuine.

#ifndef VERITYD_TESTS_TAMPER_ORDER_MUTATIONS_H_
#define VERITYD_TESTS_TAMPER_ORDER_MUTATIONS_H_

#include "tests/tamper/stream_layout.h"

namespace verity::tamper {

// Each takes the layout of `stream` and returns what it did; not applied
// (and `stream` unchanged) if the stream is too short for it.
TamperOutcome SwapChunks(const StreamLayout& layout, ReadStream* stream);
TamperOutcome DropMessage(const StreamLayout& layout, ReadStream* stream);
TamperOutcome DuplicateMessage(const StreamLayout& layout, ReadStream* stream);
TamperOutcome WrongDataOffset(const StreamLayout& layout, ReadStream* stream);
// Keeps the first `keep` messages, or half of them (rounded down) if `keep`
// is negative.
TamperOutcome Truncate(int keep, ReadStream* stream);

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_ORDER_MUTATIONS_H_
