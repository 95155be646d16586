// Test-only: a Read stream held whole, where its parts are, and what a
// mutation of it reports. Shared by the tamper mutations.

#ifndef VERITYD_TESTS_TAMPER_STREAM_LAYOUT_H_
#define VERITYD_TESTS_TAMPER_STREAM_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::tamper {

using ReadStream = std::vector<v1::ReadResponse>;

// TamperOutcome::first_bad when no byte of the blob was damaged.
inline constexpr uint64_t kNothingBad = UINT64_MAX;

// What a mutation did to one stream. Plain value.
struct TamperOutcome {
  // False if the stream offered nothing to tamper with (too few messages,
  // no tree): it then goes to the client unchanged.
  bool applied = false;
  // The client must release no byte of the blob at or past this offset: the
  // start of the first block whose content or proof was damaged (0 when the
  // descriptor was). kNothingBad when only the stream's shape was.
  uint64_t first_bad = kNothingBad;
  std::string what;  // for logs and test failures
};

// An outcome with `applied` set.
TamperOutcome Applied(uint64_t first_bad, std::string what);

// Where the parts of a stream are. Plain value; indexes into the stream it
// was made from, so any mutation that inserts or removes messages makes it
// stale.
struct StreamLayout {
  Descriptor descriptor;
  TreeGeometry geometry;
  std::vector<size_t> data_messages;  // messages with data, in order

  uint64_t block_size() const { return geometry.block_size(); }
  // The data message in the middle; there must be one.
  size_t MiddleData() const { return data_messages[data_messages.size() / 2]; }
};

// FAILED_PRECONDITION unless the first message has a descriptor a tree can be
// built for.
absl::StatusOr<StreamLayout> LayoutOf(const ReadStream& stream);

// The data_offset of the first message at or after `index` that has data;
// kNothingBad if none does.
uint64_t DataOffsetFrom(const ReadStream& stream, size_t index);

// Flips the lowest bit of (*bytes)[at].
void FlipBit(std::string* bytes, size_t at);

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_STREAM_LAYOUT_H_
