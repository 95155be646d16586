// Fuzzes the descriptors: ParseDescriptor accepts exactly the canonical
// 256-byte fs-verity form and the canonical dm-verity form (superblock + root
// hash), and Serialize() gives it back; the wire forms (FsverityDescriptor,
// DmVerityDescriptor) round-trip through the same bytes; the tree geometry of
// every accepted descriptor is consistent with its parameters.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "proto/convert.h"
#include "proto/verity/v1/verity.pb.h"
#include "tests/fuzz/fuzz_input.h"

namespace verity::fuzz {
namespace {

bool AllZero(absl::string_view bytes) {
  return bytes.find_first_not_of('\0') == absl::string_view::npos;
}

// The independent predicate, from the table in docs/protocol.md.
uint64_t Le(absl::string_view b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    v |= uint64_t{static_cast<uint8_t>(b[at + i])} << (8 * i);
  }
  return v;
}

// The dm-verity form, from the superblock table in docs/protocol.md.
bool IsCanonicalDmVerity(absl::string_view b) {
  if (b.size() < 512 || b.substr(0, 8) != absl::string_view("verity\0\0", 8) ||
      Le(b, 8, 4) != 1 || Le(b, 12, 4) != 1 || !AllZero(b.substr(16, 16))) {
    return false;
  }
  const std::string name(b.substr(32, 32));
  const std::string padding(26, '\0');
  size_t digest_size = 0;
  if (name == "sha256" + padding) {
    digest_size = 32;
  } else if (name == "sha512" + padding) {
    digest_size = 64;
  } else {
    return false;
  }
  const uint64_t block = Le(b, 64, 4);
  const uint64_t blocks = Le(b, 72, 8);
  const uint64_t salt_size = Le(b, 80, 2);
  const bool power_of_two = block != 0 && (block & (block - 1)) == 0;
  return power_of_two && block >= 512 && block <= 512 * 1024 &&
         block >= 2 * digest_size && Le(b, 68, 4) == block && blocks != 0 &&
         blocks <= kMaxDataSize / block && salt_size <= 256 &&
         AllZero(b.substr(82, 6)) &&
         AllZero(b.substr(88 + salt_size, 424 - salt_size)) &&
         b.size() == 512 + digest_size;
}

bool IsCanonical(absl::string_view b) {
  if (b.size() > kDescriptorSize) return IsCanonicalDmVerity(b);
  if (b.size() != kDescriptorSize || b[0] != 1) return false;
  const uint8_t algorithm = static_cast<uint8_t>(b[1]);
  const uint8_t salt_size = static_cast<uint8_t>(b[3]);
  if ((algorithm != 1 && algorithm != 2) || salt_size > 32) return false;
  const size_t digest_size = algorithm == 1 ? 32 : 64;
  return AllZero(b.substr(4, 4)) &&
         AllZero(b.substr(16 + digest_size, 64 - digest_size)) &&
         AllZero(b.substr(80 + salt_size, 32 - salt_size)) &&
         AllZero(b.substr(112));
}

// What ValidateMerkleParams allows: 2 * digest size <= 2^log <= 2^30, and
// for dm-verity 512 B to 512 KiB.
bool BlockSizeValid(const Descriptor& d) {
  if (d.format == TreeFormat::kDmVerity) {
    return d.log_block_size >= 9 && d.log_block_size <= 19;
  }
  const int min_log = d.hash_algorithm == HashAlgorithm::kSha256 ? 6 : 7;
  return d.log_block_size >= min_log && d.log_block_size <= 30;
}

void CheckGeometry(const Descriptor& d) {
  const absl::StatusOr<TreeGeometry> geometry = GeometryOf(d);
  FUZZ_CHECK(
      geometry.ok() == (BlockSizeValid(d) && d.data_size <= kMaxDataSize),
      geometry.status().message());
  if (!geometry.ok()) return;
  const TreeGeometry& g = *geometry;
  const uint64_t block_size = uint64_t{1} << d.log_block_size;
  FUZZ_CHECK(g.block_size() == block_size, "");
  FUZZ_CHECK(g.data_block_count() == DivRoundUp(d.data_size, block_size), "");
  // Each level hashes the one below into blocks of hashes_per_block();
  // levels stop at one block, and the serialized tree is all of them.
  uint64_t below = g.data_block_count();
  uint64_t total = 0;
  for (int level = 0; level < g.num_levels(); ++level) {
    const uint64_t blocks = g.level_block_count(level);
    FUZZ_CHECK(blocks == DivRoundUp(below, g.hashes_per_block()),
               absl::StrCat("level ", level, " has ", blocks, " blocks"));
    total += blocks;
    below = blocks;
  }
  FUZZ_CHECK(below <= 1, "the top level has more than one block");
  FUZZ_CHECK(g.num_levels() == 0 || below == 1, "");
  FUZZ_CHECK(g.tree_size() == total * block_size, "");
  // Ordinals and block ids are inverses, at both ends of every level.
  for (int level = 0; level < g.num_levels(); ++level) {
    for (uint64_t index : {uint64_t{0}, g.level_block_count(level) - 1}) {
      const TreeBlockId id{level, index};
      const absl::StatusOr<TreeBlockId> back = g.BlockAtOrdinal(g.Ordinal(id));
      FUZZ_CHECK(back.ok() && *back == id, "");
    }
  }
  FUZZ_CHECK(!g.BlockAtOrdinal(total).ok(), "an ordinal past the tree");
}

void CheckParse(absl::string_view bytes) {
  const absl::StatusOr<Descriptor> parsed = ParseDescriptor(AsBytes(bytes));
  FUZZ_CHECK(parsed.ok() == IsCanonical(bytes), parsed.status().message());
  if (!parsed.ok()) return;
  const absl::StatusOr<std::string> serialized = parsed->Serialize();
  FUZZ_CHECK(serialized.ok() && *serialized == bytes, "");
  FUZZ_CHECK(parsed->ComputeFileDigest().ok(), "");
  // The wire form carries the same descriptor.
  verity::v1::ReadResponse wire;
  SetDescriptor(*parsed, &wire);
  const absl::StatusOr<Descriptor> from_wire = DescriptorOf(wire);
  FUZZ_CHECK(from_wire.ok() && *from_wire == *parsed, "");
  CheckGeometry(*parsed);
}

// A descriptor from the wire: accepted if its numbers fit the format; then it
// serializes exactly when its salt and root hash have valid sizes, and the
// bytes parse back to it.
void CheckWire(absl::string_view message) {
  verity::v1::FsverityDescriptor proto;
  if (!proto.ParseFromArray(message.data(), static_cast<int>(message.size()))) {
    return;
  }
  const int algorithm = proto.hash_algorithm();
  const absl::StatusOr<Descriptor> d = DescriptorFromProto(proto);
  FUZZ_CHECK(d.ok() == ((algorithm == 1 || algorithm == 2) &&
                        proto.log_block_size() <= 255),
             d.status().message());
  if (!d.ok()) {
    FUZZ_CHECK(d.status().code() == absl::StatusCode::kDataLoss, "");
    return;
  }
  const absl::StatusOr<std::string> serialized = d->Serialize();
  const bool fits = d->salt.size() <= 32 &&
                    d->root_hash.size() == DigestSize(d->hash_algorithm);
  FUZZ_CHECK(serialized.ok() == fits, serialized.status().message());
  if (!fits) return;
  const absl::StatusOr<Descriptor> back = ParseDescriptor(AsBytes(*serialized));
  FUZZ_CHECK(back.ok() && *back == *d, back.status().message());
  CheckGeometry(*d);
}

}  // namespace
}  // namespace verity::fuzz

// The first byte picks the form: even, the 256 bytes; odd, a wire message.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  if (data[0] % 2 == 0) {
    verity::fuzz::CheckParse(rest);
  } else {
    verity::fuzz::CheckWire(rest);
  }
  return 0;
}
