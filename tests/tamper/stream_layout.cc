// Implements the stream layout helpers.

#include "tests/tamper/stream_layout.h"

#include <utility>

#include "lib/base/status_macros.h"
#include "proto/convert.h"

namespace verity::tamper {

TamperOutcome Applied(uint64_t first_bad, std::string what) {
  TamperOutcome outcome;
  outcome.applied = true;
  outcome.first_bad = first_bad;
  outcome.what = std::move(what);
  return outcome;
}

absl::StatusOr<StreamLayout> LayoutOf(const ReadStream& stream) {
  if (stream.empty() || !stream[0].has_fsverity_descriptor()) {
    return absl::FailedPreconditionError("the stream has no descriptor");
  }
  ASSIGN_OR_RETURN(const Descriptor descriptor,
                   DescriptorFromProto(stream[0].fsverity_descriptor()));
  absl::StatusOr<TreeGeometry> geometry = GeometryOf(descriptor);
  if (!geometry.ok()) {
    return absl::FailedPreconditionError(geometry.status().message());
  }
  StreamLayout layout{descriptor, *std::move(geometry), {}};
  for (size_t i = 0; i < stream.size(); ++i) {
    if (!stream[i].data().empty()) layout.data_messages.push_back(i);
  }
  return layout;
}

uint64_t DataOffsetFrom(const ReadStream& stream, size_t index) {
  for (size_t i = index; i < stream.size(); ++i) {
    if (!stream[i].data().empty()) return stream[i].data_offset();
  }
  return kNothingBad;
}

void FlipBit(std::string* bytes, size_t at) { (*bytes)[at] ^= 1; }

}  // namespace verity::tamper
