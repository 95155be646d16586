// Implements AddBlockBeyondRange.

#include "tests/tamper/range_mutations.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace verity::tamper {
namespace {

// The first data block past the range `request` asks for.
uint64_t EndBlock(const v1::ReadRequest& request,
                  const TreeGeometry& geometry) {
  const uint64_t end = request.length() == 0
                           ? geometry.data_size()
                           : request.offset() + request.length();
  return DivRoundUp(end, geometry.block_size());
}

// Cuts `stream` after block `end` - 1 and returns the message that carries
// block `end` (with the tree blocks upstream sent along with it), or an
// empty message if the stream has no such block.
v1::ReadResponse CutAt(uint64_t end, uint64_t bs, ReadStream* stream) {
  for (size_t i = 0; i < stream->size(); ++i) {
    v1::ReadResponse& msg = (*stream)[i];
    if (msg.data().empty()) continue;
    const uint64_t first = msg.data_offset() / bs;
    const uint64_t blocks = DivRoundUp(msg.data().size(), bs);
    if (first + blocks <= end) continue;
    v1::ReadResponse extra;
    extra.set_data_offset(end * bs);
    extra.set_data(msg.data().substr((end - first) * bs, bs));
    if (first == end) {
      *extra.mutable_tree_blocks() = msg.tree_blocks();
      stream->resize(i);
    } else {
      msg.mutable_data()->resize((end - first) * bs);
      stream->resize(i + 1);
    }
    return extra;
  }
  return {};
}

// A block that cannot exist: a copy of the first one, past the blob's end.
v1::ReadResponse MadeUpBlock(uint64_t end, uint64_t bs,
                             const ReadStream& stream) {
  v1::ReadResponse extra;
  extra.set_data_offset(end * bs);
  for (const v1::ReadResponse& msg : stream) {
    if (!msg.data().empty()) {
      extra.set_data(msg.data().substr(0, bs));
      break;
    }
  }
  return extra;
}

}  // namespace

TamperOutcome AddBlockBeyondRange(const v1::ReadRequest& request,
                                  const StreamLayout& layout,
                                  bool extend_last_chunk, ReadStream* stream) {
  if (layout.data_messages.empty()) return {};
  const uint64_t bs = layout.block_size();
  const uint64_t end = EndBlock(request, layout.geometry);
  v1::ReadResponse extra = CutAt(end, bs, stream);
  const bool genuine = !extra.data().empty();
  if (!genuine) extra = MadeUpBlock(end, bs, *stream);
  const std::string what =
      absl::StrCat(genuine ? "sent genuine block " : "made up block ", end,
                   extend_last_chunk ? " at the end of the last chunk"
                                     : " in a message of its own");
  if (!extend_last_chunk) {
    stream->push_back(std::move(extra));
  } else {
    v1::ReadResponse& last = stream->back();
    last.mutable_data()->append(extra.data());
    for (const v1::TreeBlock& block : extra.tree_blocks()) {
      *last.add_tree_blocks() = block;
    }
  }
  return Applied(std::min(end * bs, layout.geometry.data_size()), what);
}

}  // namespace verity::tamper
