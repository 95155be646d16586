// Implements the names of the tamper modes.

#include "tests/tamper/tamper.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/tree/descriptor.h"

namespace verity::tamper {
namespace {

struct KindEntry {
  TamperKind kind;
  absl::string_view name;
};

constexpr KindEntry kKinds[] = {
    {TamperKind::kNone, "none"},
    {TamperKind::kFlipDataBit, "flip-data-bit"},
    {TamperKind::kFlipTreeBit, "flip-tree-bit"},
    {TamperKind::kFlipDescriptor, "flip-descriptor"},
    {TamperKind::kSwapDataBlocks, "swap-data-blocks"},
    {TamperKind::kSwapChunks, "swap-chunks"},
    {TamperKind::kDropMessage, "drop-message"},
    {TamperKind::kDuplicateMessage, "duplicate-message"},
    {TamperKind::kTruncate, "truncate"},
    {TamperKind::kLieSizeAndSalt, "lie-size-and-salt"},
    {TamperKind::kBlocksBeyondRange, "blocks-beyond-range"},
    {TamperKind::kExtendLastChunk, "extend-last-chunk"},
    {TamperKind::kOtherBlob, "other-blob"},
    {TamperKind::kOtherBlobRelabeled, "other-blob-relabeled"},
    {TamperKind::kDropTreeBlocks, "drop-tree-blocks"},
    {TamperKind::kWrongDataOffset, "wrong-data-offset"},
};

struct FieldEntry {
  DescriptorField field;
  absl::string_view name;
};

constexpr FieldEntry kFields[] = {
    {DescriptorField::kDigestText, "digest"},
    {DescriptorField::kHashAlgorithm, "hash-algorithm"},
    {DescriptorField::kLogBlockSize, "log-block-size"},
    {DescriptorField::kSalt, "salt"},
    {DescriptorField::kDataSize, "data-size"},
    {DescriptorField::kRootHash, "root-hash"},
};

absl::string_view NameOf(TamperKind kind) {
  for (const auto& entry : kKinds) {
    if (entry.kind == kind) return entry.name;
  }
  return "?";
}

absl::string_view NameOf(DescriptorField field) {
  for (const auto& entry : kFields) {
    if (entry.field == field) return entry.name;
  }
  return "?";
}

absl::Status BadArgument(absl::string_view name, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("tamper mode '", name, "': ", why));
}

// Fills the field of `tamper` that its kind takes from `arg`; `has_arg`
// tells an empty argument from none.
absl::Status ParseArgument(absl::string_view name, absl::string_view arg,
                           bool has_arg, Tamper* tamper) {
  switch (tamper->kind) {
    case TamperKind::kFlipTreeBit:
      if (!absl::SimpleAtoi(arg, &tamper->tree_level) ||
          tamper->tree_level < 0) {
        return BadArgument(name, "needs a tree level, e.g. flip-tree-bit:0");
      }
      return absl::OkStatus();
    case TamperKind::kFlipDescriptor:
      for (const auto& entry : kFields) {
        if (entry.name == arg) {
          tamper->field = entry.field;
          return absl::OkStatus();
        }
      }
      return BadArgument(name, "needs a field, e.g. flip-descriptor:salt");
    case TamperKind::kTruncate:
      if (has_arg && (!absl::SimpleAtoi(arg, &tamper->keep_messages) ||
                      tamper->keep_messages < 0)) {
        return BadArgument(name, "takes a message count, e.g. truncate:2");
      }
      return absl::OkStatus();
    case TamperKind::kOtherBlob:
    case TamperKind::kOtherBlobRelabeled:
      if (!ParseDigest(arg).ok()) {
        return BadArgument(name, "needs a digest, e.g. other-blob:sha256:...");
      }
      tamper->other_digest = std::string(arg);
      return absl::OkStatus();
    default:
      if (has_arg) return BadArgument(name, "takes no argument");
      return absl::OkStatus();
  }
}

}  // namespace

std::string TamperName(const Tamper& tamper) {
  const absl::string_view kind = NameOf(tamper.kind);
  switch (tamper.kind) {
    case TamperKind::kFlipTreeBit:
      return absl::StrCat(kind, ":", tamper.tree_level);
    case TamperKind::kFlipDescriptor:
      return absl::StrCat(kind, ":", NameOf(tamper.field));
    case TamperKind::kTruncate:
      if (tamper.keep_messages < 0) return std::string(kind);
      return absl::StrCat(kind, ":", tamper.keep_messages);
    case TamperKind::kOtherBlob:
    case TamperKind::kOtherBlobRelabeled:
      return absl::StrCat(kind, ":", tamper.other_digest);
    default:
      return std::string(kind);
  }
}

absl::StatusOr<Tamper> ParseTamper(absl::string_view name) {
  // The argument may hold colons itself (a digest), so split at the first.
  const size_t colon = name.find(':');
  const absl::string_view kind = name.substr(0, colon);
  const bool has_arg = colon != absl::string_view::npos;
  const absl::string_view arg = has_arg ? name.substr(colon + 1) : "";
  for (const auto& entry : kKinds) {
    if (entry.name != kind) continue;
    Tamper tamper;
    tamper.kind = entry.kind;
    absl::Status status = ParseArgument(name, arg, has_arg, &tamper);
    if (!status.ok()) return status;
    return tamper;
  }
  return BadArgument(name, "unknown mode");
}

}  // namespace verity::tamper
