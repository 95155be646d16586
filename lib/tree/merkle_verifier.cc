// Implements MerkleVerifier: every block is checked against a hash that is
// itself verified, ending at the root hash, which the trusted digest
// authenticates through the descriptor.

#include "lib/tree/merkle_verifier.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/tree/read_plan.h"

namespace verity {
namespace {

std::string BlockName(TreeBlockId id) {
  return absl::StrCat("tree block ", id.index, " of level ", id.level);
}

// The trusted digest authenticates the descriptor, so only its hash is checked
// here; whether the parameters it names are acceptable is checked afterwards.
absl::Status CheckDescriptorDigest(const Descriptor& descriptor,
                                   const ParsedDigest& trusted) {
  if (trusted.digest.size() != DigestSize(trusted.algorithm)) {
    return absl::InvalidArgumentError(
        absl::StrCat("trusted digest has ", trusted.digest.size(), " bytes, ",
                     HashAlgorithmName(trusted.algorithm), " needs ",
                     DigestSize(trusted.algorithm)));
  }
  if (descriptor.hash_algorithm != trusted.algorithm) {
    return absl::DataLossError(absl::StrCat(
        "descriptor names hash algorithm ",
        HashAlgorithmName(descriptor.hash_algorithm),
        " but the trusted digest is ", HashAlgorithmName(trusted.algorithm)));
  }
  absl::StatusOr<std::string> digest = descriptor.ComputeFileDigest();
  if (!digest.ok()) {
    return absl::DataLossError(
        absl::StrCat("malformed descriptor: ", digest.status().message()));
  }
  if (*digest != trusted.digest) {
    return absl::DataLossError(
        "descriptor does not hash to the trusted digest");
  }
  return absl::OkStatus();
}

// The descriptor's parameters, within the limits `options` set.
absl::StatusOr<MerkleParams> AcceptableParams(const Descriptor& descriptor,
                                              const VerifierOptions& options) {
  if (descriptor.log_block_size >= 32 ||
      (uint64_t{1} << descriptor.log_block_size) > options.max_block_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "block size 2^", descriptor.log_block_size, " exceeds the limit of ",
        options.max_block_size, " bytes"));
  }
  return ParamsOf(descriptor);
}

}  // namespace

absl::StatusOr<MerkleVerifier> MerkleVerifier::Create(
    const Descriptor& descriptor, const ParsedDigest& trusted_digest,
    const VerifierOptions& options) {
  RETURN_IF_ERROR(CheckDescriptorDigest(descriptor, trusted_digest));
  ASSIGN_OR_RETURN(MerkleParams params, AcceptableParams(descriptor, options));
  ASSIGN_OR_RETURN(TreeGeometry geometry,
                   TreeGeometry::Create(params, descriptor.data_size));
  return MerkleVerifier(descriptor, params, geometry);
}

absl::StatusOr<std::vector<TreeBlockId>> MerkleVerifier::MissingTreeBlocks(
    uint64_t first_block, uint64_t end_block) const {
  if (first_block >= end_block || end_block > geometry_.data_block_count()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data blocks [", first_block, ", ", end_block, ") are not within the ",
        geometry_.data_block_count(), " blocks of the blob"));
  }
  std::vector<TreeBlockId> missing =
      TreeBlocksFor(geometry_, {first_block, end_block});
  missing.erase(std::remove_if(
                    missing.begin(), missing.end(),
                    [this](TreeBlockId id) { return IsTreeBlockVerified(id); }),
                missing.end());
  return missing;
}

bool MerkleVerifier::IsTreeBlockVerified(TreeBlockId id) const {
  return geometry_.Contains(id) && verified_.contains(geometry_.Ordinal(id));
}

absl::Status MerkleVerifier::AddTreeBlock(TreeBlockId id,
                                          absl::Span<const uint8_t> block) {
  if (!geometry_.Contains(id)) {
    return absl::DataLossError(
        absl::StrCat(BlockName(id), " is outside the tree"));
  }
  if (block.size() != geometry_.block_size()) {
    return absl::DataLossError(absl::StrCat(BlockName(id), " has ",
                                            block.size(), " bytes, not ",
                                            geometry_.block_size()));
  }
  const uint64_t ordinal = geometry_.Ordinal(id);
  if (auto it = verified_.find(ordinal); it != verified_.end()) {
    if (AsBytes(it->second) == block) return absl::OkStatus();
    return absl::DataLossError(
        absl::StrCat(BlockName(id), " differs from the verified copy"));
  }
  ASSIGN_OR_RETURN(HashLocation location,
                   geometry_.TreeBlockHashLocation(id.level, id.index));
  RETURN_IF_ERROR(CheckHash(location, block, [id] { return BlockName(id); }));
  verified_.emplace(ordinal, std::string(block.begin(), block.end()));
  return absl::OkStatus();
}

absl::StatusOr<absl::Span<const uint8_t>> MerkleVerifier::VerifiedTreeBlock(
    TreeBlockId id) const {
  if (!IsTreeBlockVerified(id)) {
    return absl::NotFoundError(absl::StrCat(BlockName(id), " is not verified"));
  }
  return AsBytes(verified_.at(geometry_.Ordinal(id)));
}

absl::Status MerkleVerifier::VerifyDataBlock(
    uint64_t index, absl::Span<const uint8_t> data) const {
  if (index >= geometry_.data_block_count()) {
    return absl::DataLossError(
        absl::StrCat(DataBlockName(index), " is beyond the end of the blob"));
  }
  if (data.size() != DataBlockLength(index)) {
    return absl::DataLossError(absl::StrCat(DataBlockName(index), " has ",
                                            data.size(), " bytes, not ",
                                            DataBlockLength(index)));
  }
  ASSIGN_OR_RETURN(HashLocation location,
                   geometry_.DataBlockHashLocation(index));
  return CheckHash(location, data, [&] { return DataBlockName(index); });
}

absl::Status MerkleVerifier::VerifyDataBlocks(
    uint64_t first_block, absl::Span<const uint8_t> data) const {
  const ByteChain::Piece pieces[] = {data};
  return VerifyDataBlocks(first_block, ByteChain(pieces));
}

absl::Status MerkleVerifier::VerifyDataBlocks(uint64_t first_block,
                                              const ByteChain& data) const {
  if (data.empty()) return absl::OkStatus();
  const uint64_t block_size = geometry_.block_size();
  const uint64_t blocks = DivRoundUp(data.size(), block_size);
  if (first_block >= geometry_.data_block_count() ||
      blocks > geometry_.data_block_count() - first_block) {
    return absl::DataLossError(absl::StrCat("data extends beyond the ",
                                            geometry_.data_size(),
                                            " bytes of the blob"));
  }
  const uint64_t last = first_block + blocks - 1;
  const uint64_t last_size = data.size() - (blocks - 1) * block_size;
  if (last_size != DataBlockLength(last)) {
    return absl::DataLossError(absl::StrCat(DataBlockName(last), " has ",
                                            last_size, " bytes, not ",
                                            DataBlockLength(last)));
  }
  // Hashed a batch at a time, two blocks at once where the CPU allows.
  constexpr uint64_t kBatch = 16;
  const size_t digest_size = geometry_.digest_size();
  uint8_t digests[kBatch * kMaxDigestSize];
  for (uint64_t done = 0; done < blocks; done += kBatch) {
    const uint64_t n = std::min(kBatch, blocks - done);
    const uint64_t begin = done * block_size;
    hasher_.HashBlocks(
        data.Sub(begin, std::min(n * block_size, data.size() - begin)),
        absl::MakeSpan(digests, n * digest_size));
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t index = first_block + done + i;
      ASSIGN_OR_RETURN(HashLocation location,
                       geometry_.DataBlockHashLocation(index));
      RETURN_IF_ERROR(CheckDigest(
          location, absl::MakeConstSpan(digests + i * digest_size, digest_size),
          [&] { return DataBlockName(index); }));
    }
  }
  return absl::OkStatus();
}

absl::Status MerkleVerifier::CheckHash(
    const HashLocation& location, absl::Span<const uint8_t> block,
    absl::FunctionRef<std::string()> what) const {
  uint8_t actual[kMaxDigestSize];
  const size_t digest_size = geometry_.digest_size();
  hasher_.HashBlock(block, absl::MakeSpan(actual, digest_size));
  return CheckDigest(location, absl::MakeConstSpan(actual, digest_size), what);
}

absl::Status MerkleVerifier::CheckDigest(
    const HashLocation& location, absl::Span<const uint8_t> actual,
    absl::FunctionRef<std::string()> what) const {
  const size_t digest_size = geometry_.digest_size();
  absl::Span<const uint8_t> expected;
  if (location.is_root) {
    expected = AsBytes(descriptor_.root_hash);
  } else {
    const TreeBlockId parent{location.level, location.block_index};
    auto it = verified_.find(geometry_.Ordinal(parent));
    if (it == verified_.end()) {
      return absl::DataLossError(absl::StrCat(
          what(), " arrived before its parent, ", BlockName(parent)));
    }
    expected =
        AsBytes(it->second).subspan(location.slot * digest_size, digest_size);
  }
  if (std::memcmp(actual.data(), expected.data(), digest_size) != 0) {
    return absl::DataLossError(
        absl::StrCat(what(), " does not match its hash"));
  }
  return absl::OkStatus();
}

std::string MerkleVerifier::DataBlockName(uint64_t index) const {
  return absl::StrCat("data block ", index, " (offset ",
                      index * geometry_.block_size(), ")");
}

uint64_t MerkleVerifier::DataBlockLength(uint64_t index) const {
  const uint64_t start = index * geometry_.block_size();
  return std::min<uint64_t>(geometry_.block_size(),
                            geometry_.data_size() - start);
}

absl::Status VerifyBlob(const Descriptor& descriptor,
                        const ParsedDigest& trusted_digest,
                        absl::Span<const uint8_t> tree,
                        absl::Span<const uint8_t> data) {
  ASSIGN_OR_RETURN(MerkleVerifier verifier,
                   MerkleVerifier::Create(descriptor, trusted_digest));
  const TreeGeometry& geometry = verifier.geometry();
  if (tree.size() != geometry.tree_size() ||
      data.size() != geometry.data_size()) {
    return absl::DataLossError(
        absl::StrCat("tree has ", tree.size(), " bytes and data ", data.size(),
                     "; the descriptor says ", geometry.tree_size(), " and ",
                     geometry.data_size()));
  }
  for (int level = geometry.num_levels() - 1; level >= 0; --level) {
    for (uint64_t i = 0; i < geometry.level_block_count(level); ++i) {
      const uint64_t offset =
          geometry.level_offset(level) + i * geometry.block_size();
      RETURN_IF_ERROR(verifier.AddTreeBlock(
          {level, i}, tree.subspan(offset, geometry.block_size())));
    }
  }
  return verifier.VerifyDataBlocks(0, data);
}

}  // namespace verity
