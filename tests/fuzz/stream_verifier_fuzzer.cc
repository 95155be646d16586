// Fuzzes the SDK's ReadStreamVerifier with a lying server: the input picks a
// blob, a range, a stream shape and what the client already holds, then
// mutates the honest Read stream message by message. Whatever arrives, every
// byte the sink receives is the trusted blob's byte at its offset, the tree
// never holds a block that is not the blob's, and a stream that ends OK has
// delivered the whole range.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/sdk/read_stream_verifier.h"
#include "client/testing/read_stream_fixture.h"
#include "lib/base/byte_chain.h"
#include "lib/base/lru_cache.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/merkle_params.h"
#include "lib/tree/verified_tree.h"
#include "proto/read_response_pieces.h"
#include "proto/verity/v1/verity.pb.h"
#include "tests/fuzz/fuzz_input.h"

namespace verity::fuzz {
namespace {

using client::ByteSink;
using client::ReadStreamVerifier;
using client::StreamShape;
using verity::v1::ReadResponse;
using Stream = std::vector<ReadResponse>;

// Small blobs covering every tree shape: levels 0 to 3, short last blocks,
// salts, both algorithms. Built once.
const std::vector<TestBlob>& Blobs() {
  static const auto* const blobs = new std::vector<TestBlob>{
      // 69 blocks and a short one: two levels.
      MakeRandomTestBlob(69 * 1024 + 100,
                         TestParams(HashAlgorithm::kSha256, 1024), 1),
      // 16 SHA-512 hashes per block, 259 blocks: three levels.
      MakeRandomTestBlob(259 * 1024,
                         TestParams(HashAlgorithm::kSha512, 1024, "salt"), 2),
      // One short block: no tree, the root hash is the block's.
      MakeRandomTestBlob(500, TestParams(HashAlgorithm::kSha256, 4096), 3),
      // Empty: all-zero root hash.
      MakeRandomTestBlob(0, TestParams(HashAlgorithm::kSha256, 4096), 4),
      // One level, a 32-byte salt.
      MakeRandomTestBlob(
          3 * 4096 + 1,
          TestParams(HashAlgorithm::kSha256, 4096, std::string(32, 's')), 5),
  };
  return *blobs;
}

// A position in [0, n] (n may be 0).
uint64_t Upto(FuzzInput& in, uint64_t n) { return in.Below(n + 1); }

ReadResponse* PickMessage(FuzzInput& in, Stream& stream) {
  if (stream.empty()) return nullptr;
  return &stream[in.Below(stream.size())];
}

void FlipBit(FuzzInput& in, std::string* bytes) {
  if (bytes->empty()) return;
  const uint64_t at = in.Below(bytes->size());
  (*bytes)[at] ^= static_cast<char>(1 << in.Below(8));
}

void LieInDescriptor(FuzzInput& in, ReadResponse& msg) {
  verity::v1::FsverityDescriptor* d = msg.mutable_fsverity_descriptor();
  switch (in.Below(7)) {
    case 0:
      d->set_data_size(d->data_size() + in.Integer<int8_t>());
      break;
    case 1:
      d->set_log_block_size(in.Byte());
      break;
    case 2:
      d->set_salt(in.ShortString());
      break;
    case 3:
      FlipBit(in, d->mutable_root_hash());
      break;
    case 4:
      d->set_hash_algorithm(
          static_cast<verity::v1::HashAlgorithm>(in.Below(4)));
      break;
    case 5:
      d->set_root_hash(in.ShortString());
      break;
    default:
      msg.clear_fsverity_descriptor();
  }
}

void SetDigestText(FuzzInput& in, ReadResponse& msg) {
  const std::vector<TestBlob>& blobs = Blobs();
  switch (in.Below(4)) {
    case 0:
      msg.set_digest(blobs[in.Below(blobs.size())].digest_text);
      break;
    case 1:
      msg.set_digest(absl::AsciiStrToUpper(msg.digest()));
      break;
    case 2:
      msg.set_digest(in.ShortString());
      break;
    default:
      msg.clear_digest();
  }
}

// The source blob's bytes at a block-aligned offset of the input's choice:
// true content, possibly in the wrong place.
ReadResponse RealChunk(FuzzInput& in, const TestBlob& source) {
  ReadResponse msg;
  const uint64_t block_size = uint64_t{1}
                              << source.tree.descriptor.log_block_size;
  const uint64_t blocks = DivRoundUp(source.data.size(), block_size);
  const uint64_t at = Upto(in, blocks) * block_size;
  msg.set_data_offset(at);
  if (at < source.data.size()) {
    msg.set_data(source.data.substr(at, (1 + in.Below(4)) * block_size));
  }
  return msg;
}

// Applies one mutation chosen by the input; returns false when it changed
// nothing.
bool Mutate(FuzzInput& in, const TestBlob& source, Stream& stream) {
  const int op = static_cast<int>(in.Below(16));
  ReadResponse* msg = PickMessage(in, stream);
  if (msg == nullptr && op != 13 && op != 14) return false;
  switch (op) {
    case 0:
      FlipBit(in, msg->mutable_data());
      break;
    case 1:
      if (msg->tree_blocks_size() == 0) return false;
      FlipBit(in, msg->mutable_tree_blocks(in.Below(msg->tree_blocks_size()))
                      ->mutable_data());
      break;
    case 2:
      stream.erase(stream.begin() + (msg - stream.data()));
      break;
    case 3:
      stream.insert(stream.begin() + Upto(in, stream.size()),
                    ReadResponse(*msg));
      break;
    case 4:
      std::swap(*msg, stream[in.Below(stream.size())]);
      break;
    case 5:
      msg->set_data_offset(in.Bool() ? in.Integer<uint64_t>()
                                     : msg->data_offset() +
                                           1024 * in.Integer<int8_t>());
      break;
    case 6:
      msg->mutable_data()->resize(Upto(in, msg->data().size()));
      break;
    case 7:
      msg->mutable_data()->append(in.ShortString());
      break;
    case 8:
      if (msg->tree_blocks_size() == 0) return false;
      msg->mutable_tree_blocks(in.Below(msg->tree_blocks_size()))
          ->set_index(in.Bool() ? in.Integer<uint64_t>() : in.Below(24));
      break;
    case 9:
      if (msg->tree_blocks_size() == 0) return false;
      msg->mutable_tree_blocks()->erase(msg->mutable_tree_blocks()->begin() +
                                        in.Below(msg->tree_blocks_size()));
      break;
    case 10: {
      if (msg->tree_blocks_size() == 0) return false;
      const int from = static_cast<int>(in.Below(msg->tree_blocks_size()));
      verity::v1::TreeBlock block = msg->tree_blocks(from);
      msg->mutable_tree_blocks()->erase(msg->mutable_tree_blocks()->begin() +
                                        from);
      *stream[in.Below(stream.size())].add_tree_blocks() = std::move(block);
      break;
    }
    case 11:
      LieInDescriptor(in, *msg);
      break;
    case 12:
      SetDigestText(in, *msg);
      break;
    case 13: {
      // Anything at all, as the wire would carry it.
      ReadResponse raw;
      const std::string bytes = in.String(4096);
      if (!raw.ParseFromString(bytes)) return false;
      const uint64_t at = Upto(in, stream.size());
      stream.insert(stream.begin() + at, std::move(raw));
      break;
    }
    case 14: {
      // Two statements: the order in which arguments consume the input must
      // not depend on the compiler, or replays would differ from the fuzzer.
      const uint64_t at = Upto(in, stream.size());
      ReadResponse inserted =
          in.Bool() ? ReadResponse() : RealChunk(in, source);
      stream.insert(stream.begin() + at, std::move(inserted));
      break;
    }
    default:
      stream.resize(msg - stream.data());
  }
  return true;
}

// What the client holds before the stream: nothing, a tree from an earlier
// stream of the same blob, or a cache shared with one.
struct Held {
  std::shared_ptr<VerifiedTree> tree;
  std::unique_ptr<ReadStreamVerifier::TreeCache> cache;
};

Held HoldFromEarlierStream(FuzzInput& in, const TestBlob& trusted) {
  Held held;
  const int mode = static_cast<int>(in.Below(4));
  if (mode >= 2) return held;
  if (mode == 1) {
    held.cache =
        std::make_unique<ReadStreamVerifier::TreeCache>(LruCacheOptions());
  }
  const uint64_t offset = Upto(in, trusted.data.size());
  const uint64_t length = Upto(in, trusted.data.size() - offset);
  ReadStreamVerifier earlier(trusted.digest, offset, length, VerifierOptions(),
                             held.cache.get());
  const client::ReplayResult result = client::Replay(
      earlier, client::HonestReadStream(trusted, offset, length));
  FUZZ_CHECK(result.status.ok(), result.status.message());
  if (mode == 0) held.tree = earlier.verified_tree();
  return held;
}

// Every tree block the verifier kept is the blob's own.
void CheckTree(const VerifiedTree& tree, const TestBlob& trusted) {
  const TreeGeometry& geometry = tree.geometry();
  const uint64_t blocks = geometry.tree_size() / geometry.block_size();
  for (uint64_t ordinal = 0; ordinal < blocks; ++ordinal) {
    const TreeBlockId id = *geometry.BlockAtOrdinal(ordinal);
    if (!tree.IsVerified(id)) continue;
    FUZZ_CHECK(*tree.Block(id) ==
                   trusted.tree.tree.substr(ordinal * geometry.block_size(),
                                            geometry.block_size()),
               absl::StrCat("tree block ", ordinal, " is not the blob's"));
  }
}

// `msg` as the client receives it: serialized, in slices of `slice_bytes`
// (whole if 0), its data left in them. A message that does not parse (a
// string field that is not UTF-8) is refused before the verifier sees it, as
// the client refuses it: `*unparsed` is then set.
absl::Status DeliverInSlices(ReadStreamVerifier& verifier,
                             const ReadResponse& msg, size_t slice_bytes,
                             const ByteSink& sink, bool* unparsed) {
  const std::string wire = msg.SerializeAsString();
  std::vector<ByteChain::Piece> slices;
  const absl::Span<const uint8_t> bytes = AsBytes(wire);
  const size_t step = slice_bytes == 0 ? bytes.size() : slice_bytes;
  for (size_t at = 0; at < bytes.size(); at += step) {
    slices.push_back(bytes.subspan(at, step));
  }
  ReadResponse head;
  std::vector<ByteChain::Piece> data;
  const absl::Status parsed =
      ParseReadResponsePieces(ByteChain(slices), &head, &data);
  if (!parsed.ok()) {
    FUZZ_CHECK(
        !ReadResponse().ParseFromString(wire),
        absl::StrCat("refused what protobuf parses: ", parsed.message()));
    *unparsed = true;
    return absl::DataLossError(parsed.message());
  }
  FUZZ_CHECK(ByteChain(data).ToString() == msg.data(), "data parsed wrong");
  return verifier.OnResponse(head, ByteChain(data), sink);
}

void Run(FuzzInput& in) {
  const std::vector<TestBlob>& blobs = Blobs();
  const TestBlob& trusted = blobs[in.Below(blobs.size())];
  // Mostly the trusted blob's stream; sometimes another blob's.
  const TestBlob& source =
      in.Below(8) == 0 ? blobs[in.Below(blobs.size())] : trusted;
  const uint64_t size = source.data.size();
  uint64_t offset = Upto(in, size);
  std::optional<uint64_t> length;
  if (in.Bool()) length = Upto(in, size - offset);
  const bool in_range = in.Below(16) != 0;
  if (!in_range) offset = size + 1 + in.Byte();
  StreamShape shape;
  shape.blocks_per_chunk = 1 + in.Below(8);
  shape.descriptor_alone = in.Bool();
  VerifierOptions options;
  if (in.Below(8) == 0) options.max_block_size = 1024;
  // The sink refuses bytes after this many calls (-1: never).
  const int sink_calls = in.Below(8) == 0 ? static_cast<int>(in.Below(4)) : -1;
  Held held = HoldFromEarlierStream(in, trusted);

  ReadStreamVerifier verifier(trusted.digest, offset, length, options,
                              held.cache.get());
  if (held.tree != nullptr) {
    FUZZ_CHECK(verifier.UseVerifiedTree(held.tree).ok(), "");
    for (uint64_t index : verifier.HeldTreeBlocks()) {
      shape.have_tree_blocks.insert(index);
    }
  }
  Stream stream;
  if (in_range) {
    stream = client::HonestReadStream(source, offset, length, shape);
  } else {
    stream = client::HonestReadStream(source, 0, 0, shape);
  }
  int mutations = 0;
  for (int i = 0; i < 32 && !in.empty(); ++i)
    mutations += Mutate(in, source, stream);

  // The oracle: the sink sees the trusted blob's bytes from `offset` on, in
  // order, and nothing once the verifier has failed.
  uint64_t next = offset;
  bool failed = false;
  int calls = 0;
  const absl::Status refused = absl::AbortedError("the sink is full");
  const ByteSink sink = [&](absl::Span<const uint8_t> bytes) {
    FUZZ_CHECK(!failed, "the sink was called after an error");
    FUZZ_CHECK(next + bytes.size() <= trusted.data.size(),
               "bytes past the end of the blob");
    const absl::string_view got(reinterpret_cast<const char*>(bytes.data()),
                                bytes.size());
    FUZZ_CHECK(got == absl::string_view(trusted.data).substr(next, got.size()),
               absl::StrCat("unverified bytes at ", next, " reached the sink"));
    if (calls++ == sink_calls) return refused;
    next += bytes.size();
    return absl::OkStatus();
  };
  // Each message goes the client's way: serialized, cut into slices (of a
  // size the input chooses; 0 keeps it whole) and parsed with its data left
  // in them.
  const size_t slice_bytes = in.Integer<uint16_t>();
  absl::Status status;
  bool unparsed = false;
  for (const ReadResponse& msg : stream) {
    status = DeliverInSlices(verifier, msg, slice_bytes, sink, &unparsed);
    if (!status.ok()) break;
  }
  const bool message_refused = !status.ok();
  if (status.ok()) status = verifier.Finish();
  failed = !status.ok();

  FUZZ_CHECK(verifier.verified_end() == next,
             absl::StrCat(verifier.verified_end(), " != ", next));
  const absl::StatusCode code = status.code();
  FUZZ_CHECK(
      code == absl::StatusCode::kOk || code == absl::StatusCode::kDataLoss ||
          code == absl::StatusCode::kOutOfRange ||
          code == absl::StatusCode::kInvalidArgument || status == refused,
      status.ToString());
  if (status.ok()) {
    const uint64_t end = length ? offset + *length : trusted.data.size();
    FUZZ_CHECK(next == end, absl::StrCat("ended OK at ", next, " of ", end));
  } else if (message_refused && !unparsed) {
    // A verifier that refused a message refuses everything after it.
    FUZZ_CHECK(verifier.OnResponse(ReadResponse(), sink) == status, "");
    FUZZ_CHECK(verifier.Finish() == status, "");
  }
  // An honest stream of a range inside the blob always verifies.
  const bool honest = mutations == 0 && &source == &trusted && in_range &&
                      sink_calls < 0 &&
                      (uint64_t{1} << trusted.tree.descriptor.log_block_size) <=
                          options.max_block_size;
  if (honest) FUZZ_CHECK(status.ok(), status.ToString());
  if (mutations == 0 && &source == &trusted && !in_range) {
    FUZZ_CHECK(code == absl::StatusCode::kOutOfRange ||
                   code == absl::StatusCode::kInvalidArgument,
               status.ToString());
  }
  if (verifier.verified_tree() != nullptr) {
    CheckTree(*verifier.verified_tree(), trusted);
  }
}

}  // namespace
}  // namespace verity::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  verity::fuzz::FuzzInput in(data, size);
  verity::fuzz::Run(in);
  return 0;
}
