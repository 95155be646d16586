// Implements dm-verity trees and superblocks.

#include "lib/tree/dm_verity.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/numeric/bits.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/little_endian.h"
#include "lib/base/status_macros.h"

namespace verity {
namespace {

constexpr char kMagic[8] = {'v', 'e', 'r', 'i', 't', 'y', '\0', '\0'};
constexpr uint32_t kSuperblockVersion = 1;
// Field offsets in the superblock.
constexpr size_t kVersionAt = 8;
constexpr size_t kFormatAt = 12;
constexpr size_t kUuidAt = 16;
constexpr size_t kAlgorithmAt = 32;
constexpr size_t kAlgorithmSize = 32;
constexpr size_t kDataBlockSizeAt = 64;
constexpr size_t kHashBlockSizeAt = 68;
constexpr size_t kDataBlocksAt = 72;
constexpr size_t kSaltSizeAt = 80;
constexpr size_t kSaltAt = 88;

SaltPlacement PlacementOf(const DmVerityParams& params) {
  return params.format == 0 ? SaltPlacement::kAfter : SaltPlacement::kBefore;
}

absl::Status ValidateBlockSize(const char* name, uint32_t size) {
  if (size < kMinDmVerityBlockSize || size > kMaxDmVerityBlockSize ||
      !absl::has_single_bit(size)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be a power of two from ", kMinDmVerityBlockSize, " to ",
        kMaxDmVerityBlockSize, ", not ", size));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateDmVerityParams(const DmVerityParams& params) {
  if (!IsValidHashAlgorithm(static_cast<uint8_t>(params.algorithm))) {
    return absl::InvalidArgumentError(
        "the hash algorithm must be sha256 or "
        "sha512");
  }
  RETURN_IF_ERROR(
      ValidateBlockSize("the data block size", params.data_block_size));
  RETURN_IF_ERROR(
      ValidateBlockSize("the hash block size", params.hash_block_size));
  if (params.salt.size() > kMaxDmVeritySaltSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("the salt is at most ", kMaxDmVeritySaltSize,
                     " bytes, not ", params.salt.size()));
  }
  if (params.format != 0 && params.format != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the format is 0 or 1, not ", params.format));
  }
  return absl::OkStatus();
}

absl::StatusOr<MerkleParams> MerkleParamsOf(const DmVerityParams& params) {
  RETURN_IF_ERROR(ValidateDmVerityParams(params));
  if (params.format != 1 || params.data_block_size != params.hash_block_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "verityd stores dm-verity trees of format 1 with equal data and hash "
        "block sizes, not format ",
        params.format, " with ", params.data_block_size, "-byte data and ",
        params.hash_block_size, "-byte hash blocks"));
  }
  MerkleParams merkle;
  merkle.hash_algorithm = params.algorithm;
  merkle.block_size = params.data_block_size;
  merkle.salt = params.salt;
  merkle.format = TreeFormat::kDmVerity;
  return merkle;
}

DmVerityParams DmVerityParamsOf(const MerkleParams& params) {
  DmVerityParams dm;
  dm.algorithm = params.hash_algorithm;
  dm.data_block_size = params.block_size;
  dm.hash_block_size = params.block_size;
  dm.salt = params.salt;
  dm.format = 1;
  return dm;
}

uint64_t DmVerityLayout::hash_blocks() const {
  uint64_t total = 0;
  for (uint64_t blocks : level_blocks) total += blocks;
  return total;
}

uint64_t DmVerityLayout::LevelStart(int level) const {
  uint64_t start = 0;
  for (size_t above = level + 1; above < level_blocks.size(); ++above) {
    start += level_blocks[above];
  }
  return start;
}

absl::StatusOr<DmVerityLayout> MakeDmVerityLayout(const DmVerityParams& params,
                                                  uint64_t data_blocks) {
  RETURN_IF_ERROR(ValidateDmVerityParams(params));
  if (data_blocks == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("dm-verity needs at least one whole data block (",
                     params.data_block_size, " bytes)"));
  }
  // Digests per hash block: a power of two (the digests are).
  const int bits =
      absl::countr_zero(params.hash_block_size / DigestSize(params.algorithm));
  DmVerityLayout layout;
  layout.data_blocks = data_blocks;
  // Levels until one hash block covers every data block, as veritysetup
  // counts them.
  for (int level = 0; bits * level < 64 && (data_blocks - 1) >> (bits * level);
       ++level) {
    const int shift = bits * (level + 1);
    layout.level_blocks.push_back(
        shift >= 64 ? 1
                    : (data_blocks >> shift) +
                          ((data_blocks & ((uint64_t{1} << shift) - 1)) != 0));
  }
  return layout;
}

DmVerityBuilder::DmVerityBuilder(const DmVerityParams& params)
    : params_(params),
      params_status_(ValidateDmVerityParams(params)),
      data_hasher_(params.algorithm, params.data_block_size, params.salt,
                   PlacementOf(params)),
      hash_hasher_(params.algorithm, params.hash_block_size, params.salt,
                   PlacementOf(params)),
      data_(&data_hasher_),
      levels_(&hash_hasher_) {}

void DmVerityBuilder::Reserve(uint64_t data_size) {
  if (params_status_.ok()) levels_.Reserve(data_size / params_.data_block_size);
}

absl::Status DmVerityBuilder::Update(absl::Span<const uint8_t> data) {
  RETURN_IF_ERROR(params_status_);
  if (finished_) return absl::FailedPreconditionError("already finished");
  data_.Update(data);
  levels_.AppendDataHashes(data_.digests());
  data_.ClearDigests();
  return absl::OkStatus();
}

absl::StatusOr<DmVerityTree> DmVerityBuilder::Finish() {
  RETURN_IF_ERROR(params_status_);
  if (finished_) return absl::FailedPreconditionError("already finished");
  finished_ = true;
  // The partial block the DataHasher may hold is never hashed.
  ASSIGN_OR_RETURN(
      DmVerityLayout layout,
      MakeDmVerityLayout(params_, data_.data_size() / params_.data_block_size));
  LevelCascade::Result levels = levels_.Finish();
  if (levels.tree.size() != layout.hash_blocks() * params_.hash_block_size) {
    return absl::InternalError(absl::StrCat(
        "built a ", levels.tree.size(), "-byte hash area where ",
        layout.hash_blocks() * params_.hash_block_size, " were expected"));
  }
  return DmVerityTree{std::move(layout), std::move(levels.root_hash),
                      std::move(levels.tree)};
}

std::string EncodeDmVeritySuperblock(const DmVerityParams& params,
                                     uint64_t data_blocks, const Uuid& uuid) {
  std::string out(kDmVeritySuperblockSize, '\0');
  const auto out_at = [&out](size_t at) {
    return reinterpret_cast<uint8_t*>(&out[at]);
  };
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  StoreLittleEndian(kSuperblockVersion, 4, out_at(kVersionAt));
  StoreLittleEndian(params.format, 4, out_at(kFormatAt));
  std::memcpy(&out[kUuidAt], uuid.data(), uuid.size());
  const absl::string_view name = HashAlgorithmName(params.algorithm);
  std::memcpy(&out[kAlgorithmAt], name.data(), name.size());
  StoreLittleEndian(params.data_block_size, 4, out_at(kDataBlockSizeAt));
  StoreLittleEndian(params.hash_block_size, 4, out_at(kHashBlockSizeAt));
  StoreLittleEndian(data_blocks, 8, out_at(kDataBlocksAt));
  StoreLittleEndian(params.salt.size(), 2, out_at(kSaltSizeAt));
  std::memcpy(&out[kSaltAt], params.salt.data(), params.salt.size());
  return out;
}

absl::StatusOr<DmVeritySuperblock> ParseDmVeritySuperblock(
    absl::Span<const uint8_t> bytes) {
  if (bytes.size() < kDmVeritySuperblockSize ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError("not a dm-verity superblock");
  }
  const uint8_t* in = bytes.data();
  const uint32_t version =
      static_cast<uint32_t>(LoadLittleEndian(in + kVersionAt, 4));
  if (version != kSuperblockVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("dm-verity superblock version ", version, " is unknown"));
  }
  const char* name = reinterpret_cast<const char*>(in + kAlgorithmAt);
  ASSIGN_OR_RETURN(const HashAlgorithm algorithm,
                   ParseHashAlgorithm(
                       absl::string_view(name, strnlen(name, kAlgorithmSize))));
  DmVeritySuperblock superblock;
  DmVerityParams& params = superblock.params;
  params.algorithm = algorithm;
  params.format = static_cast<int>(std::min<uint32_t>(
      static_cast<uint32_t>(LoadLittleEndian(in + kFormatAt, 4)), 2));
  params.data_block_size =
      static_cast<uint32_t>(LoadLittleEndian(in + kDataBlockSizeAt, 4));
  params.hash_block_size =
      static_cast<uint32_t>(LoadLittleEndian(in + kHashBlockSizeAt, 4));
  const uint16_t salt_size =
      static_cast<uint16_t>(LoadLittleEndian(in + kSaltSizeAt, 2));
  if (salt_size > kMaxDmVeritySaltSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("the superblock's salt is ", salt_size, " bytes"));
  }
  params.salt.assign(reinterpret_cast<const char*>(in + kSaltAt), salt_size);
  RETURN_IF_ERROR(ValidateDmVerityParams(params));
  superblock.data_blocks = LoadLittleEndian(in + kDataBlocksAt, 8);
  std::memcpy(superblock.uuid.data(), in + kUuidAt, superblock.uuid.size());
  return superblock;
}

std::string FormatUuid(const Uuid& uuid) {
  const std::string hex = absl::BytesToHexString(absl::string_view(
      reinterpret_cast<const char*>(uuid.data()), uuid.size()));
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-",
                      hex.substr(12, 4), "-", hex.substr(16, 4), "-",
                      hex.substr(20));
}

absl::StatusOr<Uuid> ParseUuid(absl::string_view text) {
  const std::vector<absl::string_view> groups = absl::StrSplit(text, '-');
  const size_t sizes[] = {8, 4, 4, 4, 12};
  std::string hex;
  bool ok = groups.size() == 5;
  for (size_t i = 0; ok && i < 5; ++i) {
    ok = groups[i].size() == sizes[i];
    absl::StrAppend(&hex, groups[i]);
  }
  ok = ok && std::all_of(hex.begin(), hex.end(),
                         [](char c) { return absl::ascii_isxdigit(c); });
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("a UUID is 8-4-4-4-12 hex digits, not \"", text, "\""));
  }
  const std::string bytes = absl::HexStringToBytes(hex);
  Uuid uuid;
  std::memcpy(uuid.data(), bytes.data(), uuid.size());
  return uuid;
}

}  // namespace verity
