// Implements sdk::Digest on lib's parser and formatter, so the SDK, the CLI
// and the server agree on what a digest looks like.

#include "verity/digest.h"

#include "absl/strings/str_cat.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/dm_verity.h"
#include "lib/trust/fsverity_signature.h"

namespace verity::sdk {

absl::StatusOr<Digest> Digest::Parse(absl::string_view text) {
  absl::StatusOr<ParsedDigest> parsed = ParseDigest(text);
  if (!parsed.ok()) return parsed.status();
  return Digest(static_cast<DigestAlgorithm>(parsed->algorithm),
                std::move(parsed->digest));
}

absl::StatusOr<Digest> Digest::FromBytes(DigestAlgorithm algorithm,
                                         absl::string_view raw) {
  const uint8_t number = static_cast<uint8_t>(algorithm);
  if (!IsValidHashAlgorithm(number)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown digest algorithm ", number));
  }
  const size_t size = DigestSize(static_cast<HashAlgorithm>(number));
  if (raw.size() != size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a digest of this algorithm has ", size, " bytes, not ", raw.size()));
  }
  return Digest(algorithm, std::string(raw));
}

absl::StatusOr<Digest> Digest::OfDmVerity(const DmVerityRoot& root) {
  DmVerityParams params;
  params.algorithm = static_cast<HashAlgorithm>(root.hash_algorithm);
  params.data_block_size = root.data_block_size;
  params.hash_block_size = root.hash_block_size;
  params.salt = root.salt;
  absl::StatusOr<Descriptor> descriptor =
      DmVerityDescriptorOf(params, root.data_blocks, root.root_hash);
  if (!descriptor.ok()) return descriptor.status();
  absl::StatusOr<std::string> digest = descriptor->ComputeFileDigest();
  if (!digest.ok()) return digest.status();
  return Digest(root.hash_algorithm, *std::move(digest));
}

absl::Status VerifyRootHashSignature(const DmVerityRoot& root,
                                     absl::string_view roothash_p7s,
                                     absl::string_view pinned_pem) {
  absl::StatusOr<FsverityCertificates> pinned =
      FsverityCertificates::FromPem(pinned_pem);
  if (!pinned.ok()) return pinned.status();
  return verity::VerifyRootHashSignature(root.root_hash, roothash_p7s, *pinned);
}

std::string Digest::ToString() const {
  return FormatDigest(static_cast<HashAlgorithm>(algorithm_), AsBytes(bytes_));
}

}  // namespace verity::sdk
