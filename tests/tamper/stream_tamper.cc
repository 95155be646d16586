// Implements UpstreamRequest and ApplyTamper: the dispatch to the mutations,
// and the two lies that replace the stream outright.

#include "tests/tamper/stream_tamper.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "tests/tamper/content_mutations.h"
#include "tests/tamper/order_mutations.h"
#include "tests/tamper/range_mutations.h"
#include "tests/tamper/stream_forge.h"

namespace verity::tamper {
namespace {

// Chunks of the forged stream; the size does not matter to the lie.
constexpr uint64_t kForgedChunkBlocks = 64;

// The content of a whole-blob stream, in order.
std::string ContentOf(const ReadStream& stream) {
  std::string content;
  for (const v1::ReadResponse& msg : stream) content += msg.data();
  return content;
}

// Replaces the whole-blob `stream` with an honest stream of three quarters of
// the content under another salt that names the digest the client asked
// for: everything checks out except the descriptor's hash.
absl::StatusOr<TamperOutcome> LieSizeAndSalt(const v1::ReadRequest& request,
                                             const StreamLayout& layout,
                                             ReadStream* stream) {
  std::string content = ContentOf(*stream);
  content.resize(content.size() - content.size() / 4);
  MerkleParams params;
  params.hash_algorithm = layout.descriptor.hash_algorithm;
  params.block_size = layout.block_size();
  params.salt = layout.descriptor.salt == "lie" ? "LIE" : "lie";
  const std::string digest = stream->front().digest();
  ASSIGN_OR_RETURN(*stream,
                   ForgeReadStream(content, params, request.offset(),
                                   request.length(), kForgedChunkBlocks));
  stream->front().set_digest(digest);
  return Applied(0,
                 absl::StrCat("served ", content.size(), " bytes with salt '",
                              params.salt, "', consistent but for the digest"));
}

TamperOutcome OtherBlob(const Tamper& tamper, const v1::ReadRequest& request,
                        ReadStream* stream) {
  if (tamper.kind == TamperKind::kOtherBlob) {
    return Applied(0, absl::StrCat("served ", tamper.other_digest));
  }
  // Only a request by digest says what digest to claim.
  if (request.digest().empty()) return {};
  stream->front().set_digest(request.digest());
  return Applied(0, absl::StrCat("served ", tamper.other_digest, " as ",
                                 request.digest()));
}

absl::StatusOr<TamperOutcome> Mutate(const Tamper& tamper,
                                     const v1::ReadRequest& request,
                                     const StreamLayout& layout,
                                     ReadStream* stream) {
  switch (tamper.kind) {
    case TamperKind::kNone:
      return TamperOutcome{};
    case TamperKind::kFlipDataBit:
      return FlipDataBit(layout, stream);
    case TamperKind::kFlipTreeBit:
      return FlipTreeBit(layout, tamper.tree_level, stream);
    case TamperKind::kFlipDescriptor:
      return FlipDescriptor(tamper.field, stream);
    case TamperKind::kSwapDataBlocks:
      return SwapDataBlocks(layout, stream);
    case TamperKind::kSwapChunks:
      return SwapChunks(layout, stream);
    case TamperKind::kDropMessage:
      return DropMessage(layout, stream);
    case TamperKind::kDuplicateMessage:
      return DuplicateMessage(layout, stream);
    case TamperKind::kTruncate:
      return Truncate(tamper.keep_messages, stream);
    case TamperKind::kLieSizeAndSalt:
      return LieSizeAndSalt(request, layout, stream);
    case TamperKind::kBlocksBeyondRange:
    case TamperKind::kExtendLastChunk:
      return AddBlockBeyondRange(
          request, layout, tamper.kind == TamperKind::kExtendLastChunk, stream);
    case TamperKind::kOtherBlob:
    case TamperKind::kOtherBlobRelabeled:
      return OtherBlob(tamper, request, stream);
    case TamperKind::kDropTreeBlocks:
      return DropTreeBlocks(stream);
    case TamperKind::kWrongDataOffset:
      return WrongDataOffset(layout, stream);
  }
  return TamperOutcome{};
}

}  // namespace

v1::ReadRequest UpstreamRequest(const Tamper& tamper,
                                const v1::ReadRequest& request) {
  v1::ReadRequest upstream = request;
  switch (tamper.kind) {
    case TamperKind::kOtherBlob:
    case TamperKind::kOtherBlobRelabeled:
      upstream.set_digest(tamper.other_digest);
      break;
    case TamperKind::kBlocksBeyondRange:
    case TamperKind::kExtendLastChunk:
      upstream.set_length(0);
      break;
    case TamperKind::kLieSizeAndSalt:
      // Only the content is of use: the forged stream brings its own tree.
      upstream.set_offset(0);
      upstream.set_length(0);
      upstream.clear_have_tree_blocks();
      upstream.set_have_whole_tree(true);
      break;
    default:
      break;
  }
  return upstream;
}

absl::StatusOr<TamperOutcome> ApplyTamper(const Tamper& tamper,
                                          const v1::ReadRequest& request,
                                          ReadStream* stream) {
  if (tamper.kind == TamperKind::kNone) return TamperOutcome{};
  ASSIGN_OR_RETURN(const StreamLayout layout, LayoutOf(*stream));
  return Mutate(tamper, request, layout, stream);
}

}  // namespace verity::tamper
