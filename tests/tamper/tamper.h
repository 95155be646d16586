// Test-only: the ways the tamper proxy corrupts a Read stream, and their names
// on a command line ("flip-tree-bit:1", "truncate:3", ...).

#ifndef VERITYD_TESTS_TAMPER_TAMPER_H_
#define VERITYD_TESTS_TAMPER_TAMPER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::tamper {

enum class TamperKind {
  kNone,
  kFlipDataBit,       // a bit of a data block in the middle of the range
  kFlipTreeBit,       // a bit of the last tree block of `tree_level` sent
  kFlipDescriptor,    // `field` of the first message
  kSwapDataBlocks,    // two adjacent blocks inside one chunk
  kSwapChunks,        // two consecutive data messages
  kDropMessage,       // the data message in the middle
  kDuplicateMessage,  // the data message in the middle, sent twice in a row
  kTruncate,          // the first `keep_messages` messages, then OK
  // The stream an honest server would send for shorter content with another
  // salt, self-consistent except that it names the requested digest.
  kLieSizeAndSalt,
  kBlocksBeyondRange,   // one genuine block past the range, in its own message
  kExtendLastChunk,     // the same block, appended to the last chunk
  kOtherBlob,           // `other_digest`'s genuine stream instead
  kOtherBlobRelabeled,  // the same, naming the requested digest
  kDropTreeBlocks,      // the tree blocks of the last message that has any
  kWrongDataOffset,     // the middle data message claims to be a block later
};

// The fields of the first message kFlipDescriptor can damage.
enum class DescriptorField {
  kDigestText,  // ReadResponse.digest, the descriptor left intact
  kHashAlgorithm,
  kLogBlockSize,
  kSalt,
  kDataSize,
  kRootHash,
};

// One way to tamper. Plain value.
struct Tamper {
  TamperKind kind = TamperKind::kNone;
  int tree_level = 0;  // kFlipTreeBit: 0 is the level above the data
  DescriptorField field = DescriptorField::kRootHash;  // kFlipDescriptor
  // kTruncate: how many messages go through (the first carries the
  // descriptor); -1 means half of them, rounded down.
  int keep_messages = -1;
  std::string other_digest;  // kOtherBlob*: the blob served instead
};

// "flip-tree-bit:1", "flip-descriptor:salt", "truncate", "truncate:2",
// "other-blob:sha256:<hex>", ...; ParseTamper reads what this writes.
std::string TamperName(const Tamper& tamper);

// INVALID_ARGUMENT for an unknown name or a missing or malformed argument.
absl::StatusOr<Tamper> ParseTamper(absl::string_view name);

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_TAMPER_H_
