// Implements ForgeReadStream with the library's tree builder, so the forged
// tree is exactly what the server would have stored for that content.

#include "tests/tamper/stream_forge.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "lib/descriptor.h"
#include "lib/merkle_builder.h"
#include "lib/status_macros.h"
#include "proto/convert.h"

namespace verity::tamper {
namespace {

// Adds to `msg` the tree blocks for data blocks [first, end) not in `sent`.
void AddTreeBlocks(const TreeGeometry& geometry, const std::string& tree,
                   uint64_t first, uint64_t end,
                   absl::flat_hash_set<uint64_t>* sent, v1::ReadResponse* msg) {
  const uint64_t bs = geometry.block_size();
  for (const TreeBlockSpan& span : geometry.CoveringTreeBlocks(first, end)) {
    for (uint64_t i = span.first; i <= span.last; ++i) {
      const uint64_t ordinal = geometry.Ordinal({span.level, i});
      if (!sent->insert(ordinal).second) continue;
      v1::TreeBlock* block = msg->add_tree_blocks();
      block->set_index(ordinal);
      block->set_data(tree.substr(ordinal * bs, bs));
    }
  }
}

}  // namespace

absl::StatusOr<ReadStream> ForgeReadStream(absl::string_view content,
                                           const MerkleParams& params,
                                           uint64_t offset, uint64_t length,
                                           uint64_t chunk_blocks) {
  MerkleBuilder builder(params);
  RETURN_IF_ERROR(builder.Update(AsBytes(content)));
  ASSIGN_OR_RETURN(const MerkleTree tree, builder.Finish());
  ASSIGN_OR_RETURN(const TreeGeometry geometry,
                   TreeGeometry::Create(params, content.size()));
  ReadStream stream(1);
  stream[0].set_digest(
      FormatDigest(params.hash_algorithm, AsBytes(tree.digest)));
  *stream[0].mutable_fsverity_descriptor() = DescriptorToProto(tree.descriptor);
  const uint64_t size = content.size();
  const uint64_t begin = std::min(offset, size);
  const uint64_t end =
      length == 0 ? size : std::min(size, begin + std::min(length, size));
  const uint64_t bs = geometry.block_size();
  absl::flat_hash_set<uint64_t> sent;
  for (uint64_t first = begin / bs; first * bs < end;) {
    const uint64_t last = std::min(first + std::max<uint64_t>(1, chunk_blocks),
                                   DivRoundUp(end, bs));
    v1::ReadResponse& msg = stream.emplace_back();
    AddTreeBlocks(geometry, tree.tree, first, last, &sent, &msg);
    msg.set_data_offset(first * bs);
    msg.set_data(std::string(content.substr(first * bs, (last - first) * bs)));
    first = last;
  }
  return stream;
}

}  // namespace verity::tamper
