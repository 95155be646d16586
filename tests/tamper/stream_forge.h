// Test-only: the Read stream an honest verityd would send for any content,
// so that a lying server can be fully self-consistent.

#ifndef VERITYD_TESTS_TAMPER_STREAM_FORGE_H_
#define VERITYD_TESTS_TAMPER_STREAM_FORGE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/tree/merkle_params.h"
#include "tests/tamper/stream_layout.h"

namespace verity::tamper {

// The stream for [offset, offset + length) (length 0: to the end) of
// `content` stored with `params`: the descriptor with its own digest, then
// chunks of `chunk_blocks` blocks, each with the tree blocks it needs that
// were not sent yet, parents first. A range past the content is cut to it.
// INVALID_ARGUMENT for bad params.
absl::StatusOr<ReadStream> ForgeReadStream(absl::string_view content,
                                           const MerkleParams& params,
                                           uint64_t offset, uint64_t length,
                                           uint64_t chunk_blocks);

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_STREAM_FORGE_H_
