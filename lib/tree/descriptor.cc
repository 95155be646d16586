// Serializes descriptors of both formats and formats and parses digest
// strings.

#include "lib/tree/descriptor.h"

#include <algorithm>
#include <cstring>

#include "absl/numeric/bits.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "lib/base/little_endian.h"
#include "lib/base/status_macros.h"
#include "lib/tree/dm_verity.h"
#include "lib/tree/merkle_params.h"

namespace verity {
namespace {

// Field offsets in struct fsverity_descriptor.
constexpr size_t kVersionOffset = 0;
constexpr size_t kHashAlgorithmOffset = 1;
constexpr size_t kLogBlockSizeOffset = 2;
constexpr size_t kSaltSizeOffset = 3;
// 4..7: le32 sig_size, always 0 here.
constexpr size_t kDataSizeOffset = 8;
constexpr size_t kRootHashOffset = 16;
constexpr size_t kSaltOffset = 80;
// 112..255: reserved, zero.

absl::Status CheckFieldsFit(const Descriptor& d) {
  if (!IsValidHashAlgorithm(static_cast<uint8_t>(d.hash_algorithm))) {
    return absl::InvalidArgumentError("descriptor has an unknown algorithm");
  }
  if (d.format == TreeFormat::kDmVerity) return absl::OkStatus();
  if (d.format != TreeFormat::kFsVerity) {
    return absl::InvalidArgumentError("descriptor has an unknown format");
  }
  if (d.salt.size() > kMaxSaltSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("descriptor salt is ", d.salt.size(), " bytes long"));
  }
  if (d.root_hash.size() != DigestSize(d.hash_algorithm)) {
    return absl::InvalidArgumentError(
        absl::StrCat("descriptor root hash is ", d.root_hash.size(),
                     " bytes, not ", DigestSize(d.hash_algorithm)));
  }
  return absl::OkStatus();
}

bool IsHex(absl::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return absl::ascii_isxdigit(c); });
}

absl::StatusOr<std::string> SerializeDmVerity(const Descriptor& d) {
  ASSIGN_OR_RETURN(const MerkleParams params, ParamsOf(d));
  ASSIGN_OR_RETURN(const TreeGeometry geometry,
                   TreeGeometry::Create(params, d.data_size));
  if (d.root_hash.size() != geometry.digest_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("descriptor root hash is ", d.root_hash.size(),
                     " bytes, not ", geometry.digest_size()));
  }
  return absl::StrCat(
      EncodeDmVeritySuperblock(DmVerityParamsOf(params),
                               geometry.data_block_count(), Uuid{}),
      d.root_hash);
}

absl::StatusOr<Descriptor> ParseDmVerity(absl::Span<const uint8_t> bytes) {
  ASSIGN_OR_RETURN(const DmVeritySuperblock superblock,
                   ParseDmVeritySuperblock(bytes));
  const size_t digest_size = DigestSize(superblock.params.algorithm);
  if (bytes.size() != kDmVeritySuperblockSize + digest_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("dm-verity descriptor is ", bytes.size(), " bytes, not ",
                     kDmVeritySuperblockSize + digest_size));
  }
  return DmVerityDescriptorOf(superblock.params, superblock.data_blocks,
                              std::string(reinterpret_cast<const char*>(
                                              &bytes[kDmVeritySuperblockSize]),
                                          digest_size));
}

absl::StatusOr<Descriptor> ParseFsVerity(absl::Span<const uint8_t> bytes) {
  if (bytes.size() != kDescriptorSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "descriptor is ", bytes.size(), " bytes, not ", kDescriptorSize));
  }
  const uint8_t algorithm = bytes[kHashAlgorithmOffset];
  const uint8_t salt_size = bytes[kSaltSizeOffset];
  if (!IsValidHashAlgorithm(algorithm) || salt_size > kMaxSaltSize) {
    return absl::InvalidArgumentError("descriptor is malformed");
  }
  Descriptor d;
  d.hash_algorithm = static_cast<HashAlgorithm>(algorithm);
  d.log_block_size = bytes[kLogBlockSizeOffset];
  d.salt.assign(reinterpret_cast<const char*>(&bytes[kSaltOffset]), salt_size);
  d.data_size = LoadLittleEndian(&bytes[kDataSizeOffset], 8);
  d.root_hash.assign(reinterpret_cast<const char*>(&bytes[kRootHashOffset]),
                     DigestSize(d.hash_algorithm));
  return d;
}

}  // namespace

absl::StatusOr<std::string> Descriptor::Serialize() const {
  RETURN_IF_ERROR(CheckFieldsFit(*this));
  if (format == TreeFormat::kDmVerity) return SerializeDmVerity(*this);
  std::string out(kDescriptorSize, '\0');
  out[kVersionOffset] = 1;
  out[kHashAlgorithmOffset] = static_cast<char>(hash_algorithm);
  out[kLogBlockSizeOffset] = static_cast<char>(log_block_size);
  out[kSaltSizeOffset] = static_cast<char>(salt.size());
  StoreLittleEndian(data_size, 8,
                    reinterpret_cast<uint8_t*>(&out[kDataSizeOffset]));
  std::memcpy(&out[kRootHashOffset], root_hash.data(), root_hash.size());
  std::memcpy(&out[kSaltOffset], salt.data(), salt.size());
  return out;
}

absl::StatusOr<Descriptor> ParseDescriptor(absl::Span<const uint8_t> bytes) {
  ASSIGN_OR_RETURN(const Descriptor d, bytes.size() == kDescriptorSize
                                           ? ParseFsVerity(bytes)
                                           : ParseDmVerity(bytes));
  // Whatever the fields do not capture (version, sig_size, padding, reserved
  // bytes, the UUID) must be exactly what Serialize() writes.
  absl::StatusOr<std::string> canonical = d.Serialize();
  if (!canonical.ok() || AsBytes(*canonical) != bytes) {
    return absl::InvalidArgumentError("descriptor is not in canonical form");
  }
  return d;
}

absl::StatusOr<Descriptor> DmVerityDescriptorOf(const DmVerityParams& params,
                                                uint64_t data_blocks,
                                                std::string root_hash) {
  ASSIGN_OR_RETURN(const MerkleParams merkle, MerkleParamsOf(params));
  Descriptor d;
  d.format = TreeFormat::kDmVerity;
  d.hash_algorithm = merkle.hash_algorithm;
  d.log_block_size = static_cast<uint8_t>(absl::countr_zero(merkle.block_size));
  d.salt = merkle.salt;
  if (__builtin_mul_overflow(data_blocks, merkle.block_size, &d.data_size) ||
      d.data_size > kMaxDataSize) {
    return absl::InvalidArgumentError(
        absl::StrCat(data_blocks, " blocks of ", merkle.block_size,
                     " bytes are more than a blob holds"));
  }
  d.root_hash = std::move(root_hash);
  return d;
}

absl::StatusOr<MerkleParams> ParamsOf(const Descriptor& descriptor) {
  // Larger shifts are undefined; ValidateMerkleParams bounds the rest.
  if (descriptor.log_block_size >= 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("block size 2^", descriptor.log_block_size,
                     " is too large (maximum ", kMaxBlockSize, ")"));
  }
  MerkleParams params;
  params.hash_algorithm = descriptor.hash_algorithm;
  params.block_size = uint32_t{1} << descriptor.log_block_size;
  params.salt = descriptor.salt;
  params.format = descriptor.format;
  RETURN_IF_ERROR(ValidateMerkleParams(params));
  return params;
}

absl::StatusOr<TreeGeometry> GeometryOf(const Descriptor& descriptor) {
  ASSIGN_OR_RETURN(const MerkleParams params, ParamsOf(descriptor));
  return TreeGeometry::Create(params, descriptor.data_size);
}

absl::StatusOr<std::string> Descriptor::ComputeFileDigest() const {
  ASSIGN_OR_RETURN(const std::string serialized, Serialize());
  return ComputeHash(hash_algorithm, AsBytes(serialized));
}

std::string FormatDigest(HashAlgorithm algorithm,
                         absl::Span<const uint8_t> digest) {
  return absl::StrCat(
      HashAlgorithmName(algorithm), ":",
      absl::BytesToHexString(absl::string_view(
          reinterpret_cast<const char*>(digest.data()), digest.size())));
}

std::string DigestFileName(absl::string_view digest) {
  return absl::StrReplaceAll(digest, {{":", "-"}});
}

std::string ParsedDigest::ToString() const {
  return FormatDigest(algorithm, AsBytes(digest));
}

absl::StatusOr<ParsedDigest> ParseDigest(absl::string_view text) {
  const size_t colon = text.find(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "digest lacks an algorithm prefix (expected \"sha256:<hex>\")");
  }
  ParsedDigest parsed;
  ASSIGN_OR_RETURN(parsed.algorithm, ParseHashAlgorithm(text.substr(0, colon)));
  const absl::string_view hex = text.substr(colon + 1);
  const size_t hex_size = 2 * DigestSize(parsed.algorithm);
  if (hex.size() != hex_size || !IsHex(hex)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a ", HashAlgorithmName(parsed.algorithm), " digest needs exactly ",
        hex_size, " hex digits after the colon"));
  }
  parsed.digest = absl::HexStringToBytes(hex);
  return parsed;
}

}  // namespace verity
