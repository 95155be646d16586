// Implements ForgeReadStream with the honest stream of client/testing, so the
// forged stream is exactly what the server would send for that content.

#include "tests/tamper/stream_forge.h"

#include <algorithm>
#include <optional>
#include <string>

#include "client/testing/read_stream_fixture.h"
#include "lib/base/status_macros.h"

namespace verity::tamper {

absl::StatusOr<ReadStream> ForgeReadStream(absl::string_view content,
                                           const MerkleParams& params,
                                           uint64_t offset, uint64_t length,
                                           uint64_t chunk_blocks) {
  RETURN_IF_ERROR(ValidateMerkleParams(params));
  const TestBlob blob = MakeTestBlob(std::string(content), params);
  const uint64_t size = content.size();
  const uint64_t begin = std::min(offset, size);
  const uint64_t end =
      length == 0 ? size : std::min(size, begin + std::min(length, size));
  client::StreamShape shape;
  shape.blocks_per_chunk = std::max<uint64_t>(1, chunk_blocks);
  return client::HonestReadStream(blob, begin, end - begin, shape);
}

}  // namespace verity::tamper
