// Implements the content mutations. Each damages as little as it can, in the
// middle of the stream where it has a choice, so that a verifier that checks
// too late or too coarsely would let the damage through.

#include "tests/tamper/content_mutations.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace verity::tamper {
namespace {

// A data message holding at least two whole blocks, the middle one if it
// does; stream.size() if none does.
size_t MessageWithTwoBlocks(const StreamLayout& layout,
                            const ReadStream& stream) {
  std::vector<size_t> order = {layout.MiddleData()};
  order.insert(order.end(), layout.data_messages.begin(),
               layout.data_messages.end());
  for (size_t i : order) {
    if (stream[i].data().size() / layout.block_size() >= 2) return i;
  }
  return stream.size();
}

}  // namespace

TamperOutcome FlipDataBit(const StreamLayout& layout, ReadStream* stream) {
  if (layout.data_messages.empty()) return {};
  v1::ReadResponse& msg = (*stream)[layout.MiddleData()];
  const uint64_t bs = layout.block_size();
  const uint64_t begin = DivRoundUp(msg.data().size(), bs) / 2 * bs;
  const uint64_t length = std::min<uint64_t>(bs, msg.data().size() - begin);
  FlipBit(msg.mutable_data(), begin + length / 2);
  const uint64_t block = msg.data_offset() + begin;
  return Applied(block, absl::StrCat("flipped a bit of data block ", block / bs,
                                     " at offset ", block));
}

TamperOutcome SwapDataBlocks(const StreamLayout& layout, ReadStream* stream) {
  if (layout.data_messages.empty()) return {};
  const size_t index = MessageWithTwoBlocks(layout, *stream);
  if (index == stream->size()) return {};
  v1::ReadResponse& msg = (*stream)[index];
  const uint64_t bs = layout.block_size();
  const uint64_t first = (msg.data().size() / bs / 2 - 1) * bs;
  std::string& data = *msg.mutable_data();
  std::swap_ranges(data.begin() + first, data.begin() + first + bs,
                   data.begin() + first + bs);
  const uint64_t block = msg.data_offset() + first;
  return Applied(block, absl::StrCat("swapped data blocks ", block / bs,
                                     " and ", block / bs + 1));
}

TamperOutcome FlipTreeBit(const StreamLayout& layout, int level,
                          ReadStream* stream) {
  // The last one sent: the data before it is then genuinely verifiable, and
  // a verifier must release exactly that.
  for (size_t i = stream->size(); i-- > 0;) {
    v1::ReadResponse& msg = (*stream)[i];
    for (int j = msg.tree_blocks_size(); j-- > 0;) {
      v1::TreeBlock& block = *msg.mutable_tree_blocks(j);
      absl::StatusOr<TreeBlockId> id =
          layout.geometry.BlockAtOrdinal(block.index());
      if (!id.ok() || id->level != level || block.data().empty()) continue;
      FlipBit(block.mutable_data(), 0);
      return Applied(
          DataOffsetFrom(*stream, i),
          absl::StrCat("flipped a bit of tree block ", id->index, " of level ",
                       level, " (index ", block.index(), ") in message ", i));
    }
  }
  return {};
}

TamperOutcome DropTreeBlocks(ReadStream* stream) {
  for (size_t i = stream->size(); i-- > 0;) {
    v1::ReadResponse& msg = (*stream)[i];
    if (msg.tree_blocks().empty()) continue;
    const int count = msg.tree_blocks_size();
    msg.clear_tree_blocks();
    return Applied(
        DataOffsetFrom(*stream, i),
        absl::StrCat("dropped the ", count, " tree blocks of message ", i));
  }
  return {};
}

TamperOutcome FlipDescriptor(DescriptorField field, ReadStream* stream) {
  v1::ReadResponse& first = stream->front();
  v1::FsverityDescriptor& d = *first.mutable_fsverity_descriptor();
  switch (field) {
    case DescriptorField::kDigestText: {
      if (first.digest().empty()) return {};
      char& last = first.mutable_digest()->back();
      last = last == '0' ? '1' : '0';
      return Applied(0, "changed the last hex digit of the digest text");
    }
    case DescriptorField::kHashAlgorithm:
      d.set_hash_algorithm(d.hash_algorithm() == v1::SHA256 ? v1::SHA512
                                                            : v1::SHA256);
      return Applied(0, "swapped SHA-256 and SHA-512 in the descriptor");
    case DescriptorField::kLogBlockSize:
      d.set_log_block_size(d.log_block_size() ^ 1);
      return Applied(0, "flipped a bit of the descriptor's log_block_size");
    case DescriptorField::kSalt:
      if (d.salt().empty()) d.set_salt(std::string(1, '\0'));
      FlipBit(d.mutable_salt(), 0);
      return Applied(0, "flipped a bit of the descriptor's salt");
    case DescriptorField::kDataSize:
      d.set_data_size(d.data_size() ^ 1);
      return Applied(0, "flipped a bit of the descriptor's data_size");
    case DescriptorField::kRootHash:
      if (d.root_hash().empty()) return {};
      FlipBit(d.mutable_root_hash(), 0);
      return Applied(0, "flipped a bit of the descriptor's root_hash");
  }
  return {};
}

}  // namespace verity::tamper
