// Builds test blobs with lib's MerkleBuilder and slices their trees into the
// messages of a Read stream.

#include "client/testing/read_stream_fixture.h"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <utility>

#include "lib/hash.h"
#include "lib/read_plan.h"
#include "proto/convert.h"

namespace verity::client {
TestBlob MakeTestBlob(std::string data, const MerkleParams& params) {
  TestBlob blob;
  blob.data = std::move(data);
  MerkleBuilder builder(params);
  absl::Status status = builder.Update(AsBytes(blob.data));
  absl::StatusOr<MerkleTree> tree = builder.Finish();
  if (!status.ok() || !tree.ok()) std::abort();  // a bug in the test itself
  blob.tree = *std::move(tree);
  blob.digest = {params.hash_algorithm, blob.tree.digest};
  blob.digest_text =
      FormatDigest(params.hash_algorithm, AsBytes(blob.tree.digest));
  return blob;
}

TestBlob MakeRandomTestBlob(uint64_t size, const MerkleParams& params,
                            uint32_t seed) {
  std::mt19937 rng(seed);
  std::string data(size, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  return MakeTestBlob(std::move(data), params);
}

MerkleParams TestParams(HashAlgorithm algorithm, uint32_t block_size,
                        std::string salt) {
  MerkleParams params;
  params.hash_algorithm = algorithm;
  params.block_size = block_size;
  params.salt = std::move(salt);
  return params;
}

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
  *stream[0].mutable_fsverity_descriptor() =
      DescriptorToProto(blob.tree.descriptor);
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
