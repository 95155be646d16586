// Slices test blobs and their trees into the messages of a Read stream, with
// lib's read planner.

#include "client/testing/read_stream_fixture.h"

#include <algorithm>
#include <utility>

#include "lib/hash/hash.h"
#include "lib/tree/read_plan.h"
#include "proto/convert.h"

namespace verity::client {
std::vector<verity::v1::ReadResponse> HonestReadStream(
    const TestBlob& blob, uint64_t offset, std::optional<uint64_t> length,
    const StreamShape& shape) {
  const TreeGeometry geometry = *GeometryOf(blob.tree.descriptor);
  const uint64_t bs = geometry.block_size();
  const uint64_t end = length ? offset + *length : blob.data.size();
  const BlockRange blocks = BlocksOf(geometry, {offset, end});
  const uint64_t first_block = blocks.first;
  const uint64_t end_block = blocks.end;

  std::vector<verity::v1::ReadResponse> stream(1);
  stream[0].set_digest(blob.digest_text);
  SetDescriptor(blob.tree.descriptor, &stream[0]);
  if (shape.descriptor_alone && first_block < end_block) stream.emplace_back();
  ProofPlanner proofs(geometry, shape.have_tree_blocks);
  for (uint64_t b = first_block; b < end_block; b += shape.blocks_per_chunk) {
    const uint64_t chunk_end = std::min(b + shape.blocks_per_chunk, end_block);
    if (b != first_block) stream.emplace_back();
    verity::v1::ReadResponse& msg = stream.back();
    for (const TreeBlockId& id : proofs.ForChunk({b, chunk_end})) {
      verity::v1::TreeBlock* block = msg.add_tree_blocks();
      block->set_index(geometry.Ordinal(id));
      block->set_data(
          blob.tree.tree.substr(block->index() * bs, geometry.block_size()));
    }
    const uint64_t data_end =
        std::min<uint64_t>(chunk_end * bs, blob.data.size());
    msg.set_data_offset(b * bs);
    msg.set_data(blob.data.substr(b * bs, data_end - b * bs));
  }
  return stream;
}

ReplayResult Replay(ReadStreamVerifier& verifier,
                    const std::vector<verity::v1::ReadResponse>& stream) {
  ReplayResult result;
  const ByteSink sink = [&result](absl::Span<const uint8_t> bytes) {
    result.released.append(bytes.begin(), bytes.end());
    return absl::OkStatus();
  };
  for (const verity::v1::ReadResponse& msg : stream) {
    result.status = verifier.OnResponse(msg, sink);
    if (!result.status.ok()) break;
  }
  if (result.status.ok()) result.status = verifier.Finish();
  result.verified_end = verifier.verified_end();
  return result;
}

ReplayResult Replay(const ParsedDigest& trusted, uint64_t offset,
                    std::optional<uint64_t> length,
                    const std::vector<verity::v1::ReadResponse>& stream) {
  ReadStreamVerifier verifier(trusted, offset, length);
  return Replay(verifier, stream);
}

}  // namespace verity::client
