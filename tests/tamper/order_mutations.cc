// Implements the order mutations. Every byte they send is genuine and was in
// the honest stream, so only the verifier's bookkeeping of positions can
// catch them.

#include "tests/tamper/order_mutations.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace verity::tamper {
namespace {

// verityd's first message carries the descriptor and the first chunk. The
// mutations move, copy or drop chunks but keep the descriptor in front:
// a stream without one is refused before any chunk is looked at.
void MoveHeader(v1::ReadResponse* from, v1::ReadResponse* to) {
  to->set_digest(from->digest());
  *to->mutable_fsverity_descriptor() = from->fsverity_descriptor();
  from->clear_digest();
  from->clear_fsverity_descriptor();
}

}  // namespace

TamperOutcome SwapChunks(const StreamLayout& layout, ReadStream* stream) {
  const size_t count = layout.data_messages.size();
  if (count < 2) return {};
  const size_t k = (count - 2) / 2;
  const size_t a = layout.data_messages[k];
  const size_t b = layout.data_messages[k + 1];
  const uint64_t offset = (*stream)[a].data_offset();
  // Whole messages, tree blocks included: the later chunk arrives with the
  // proof it came with.
  std::swap((*stream)[a], (*stream)[b]);
  if (a == 0) MoveHeader(&(*stream)[b], &(*stream)[a]);
  return Applied(
      offset, absl::StrCat("swapped messages ", a, " and ", b, " (data at ",
                           offset, " and ", (*stream)[a].data_offset(), ")"));
}

TamperOutcome DropMessage(const StreamLayout& layout, ReadStream* stream) {
  if (layout.data_messages.empty()) return {};
  const size_t index = layout.MiddleData();
  const uint64_t offset = (*stream)[index].data_offset();
  if (index == 0) {
    v1::ReadResponse header;
    MoveHeader(&(*stream)[0], &header);
    (*stream)[0] = std::move(header);
  } else {
    stream->erase(stream->begin() + index);
  }
  return Applied(offset, absl::StrCat("dropped message ", index, " (data at ",
                                      offset, ")"));
}

TamperOutcome DuplicateMessage(const StreamLayout& layout, ReadStream* stream) {
  if (layout.data_messages.empty()) return {};
  const size_t index = layout.MiddleData();
  v1::ReadResponse copy = (*stream)[index];
  copy.clear_digest();
  copy.clear_fsverity_descriptor();
  const uint64_t end = copy.data_offset() + copy.data().size();
  stream->insert(stream->begin() + index + 1, std::move(copy));
  return Applied(end, absl::StrCat("sent message ", index,
                                   " twice (data up to ", end, ")"));
}

TamperOutcome WrongDataOffset(const StreamLayout& layout, ReadStream* stream) {
  if (layout.data_messages.empty()) return {};
  v1::ReadResponse& msg = (*stream)[layout.MiddleData()];
  const uint64_t offset = msg.data_offset();
  msg.set_data_offset(offset + layout.block_size());
  return Applied(offset, absl::StrCat("moved the data at ", offset, " to ",
                                      msg.data_offset()));
}

TamperOutcome Truncate(int keep, ReadStream* stream) {
  const size_t kept = keep < 0 ? stream->size() / 2 : static_cast<size_t>(keep);
  if (kept >= stream->size()) return {};
  stream->resize(kept);
  // Nothing sent is damaged: the client just must not call it complete.
  return Applied(kNothingBad,
                 absl::StrCat("ended with OK after ", kept, " messages"));
}

}  // namespace verity::tamper
