// Implements the conversions; reports from the server go through
// CheckBlobInfo, so nothing unchecked becomes an sdk::BlobInfo.

#include "client/sdk/sdk_convert.h"

#include "absl/strings/str_cat.h"
#include "client/sdk/blob_info_check.h"
#include "lib/base/status_macros.h"

namespace verity::client {

ParsedDigest ToParsedDigest(const sdk::Digest& digest) {
  return {static_cast<HashAlgorithm>(digest.algorithm()), digest.bytes()};
}

// Both enums are IOPRIO_CLASS_*; the public one spells out its numbers, and
// they must stay lib's.
static_assert(static_cast<int>(sdk::PriorityClass::kUnset) ==
              static_cast<int>(PriorityClass::kNone));
static_assert(static_cast<int>(sdk::PriorityClass::kRealtime) ==
              static_cast<int>(PriorityClass::kRt));
static_assert(static_cast<int>(sdk::PriorityClass::kBestEffort) ==
              static_cast<int>(PriorityClass::kBe));
static_assert(static_cast<int>(sdk::PriorityClass::kIdle) ==
              static_cast<int>(PriorityClass::kIdle));

PriorityClass ToPriorityClass(sdk::PriorityClass priority) {
  switch (priority) {
    case sdk::PriorityClass::kRealtime:
      return PriorityClass::kRt;
    case sdk::PriorityClass::kBestEffort:
      return PriorityClass::kBe;
    case sdk::PriorityClass::kIdle:
      return PriorityClass::kIdle;
    case sdk::PriorityClass::kUnset:
      break;
  }
  // A value outside the enum is the server's default, as kUnset is.
  return PriorityClass::kNone;
}

sdk::NameStatementInfo ToNameStatementInfo(const NameStatement& statement,
                                           bool verified) {
  sdk::NameStatementInfo info;
  info.tree = statement.claim.kind == NameKind::kTree;
  info.version = statement.claim.version;
  info.issued = statement.claim.issued;
  info.expires = statement.claim.expires;
  for (const KeyId& id : statement.signers) {
    info.signer_key_ids.push_back(KeyIdToHex(id));
  }
  info.verified = verified;
  info.encoded = statement.encoded;
  return info;
}

// The SDK's public enum has lib's numbers.
static_assert(static_cast<int>(sdk::TreeFormat::kFsVerity) ==
              static_cast<int>(TreeFormat::kFsVerity));
static_assert(static_cast<int>(sdk::TreeFormat::kDmVerity) ==
              static_cast<int>(TreeFormat::kDmVerity));

absl::StatusOr<sdk::BlobInfo> BlobInfoFromProto(const v1::BlobInfo& info,
                                                const ParsedDigest* expected) {
  ASSIGN_OR_RETURN(const CheckedBlobInfo checked,
                   CheckBlobInfo(info, expected));
  ASSIGN_OR_RETURN(sdk::Digest digest,
                   sdk::Digest::FromBytes(static_cast<sdk::DigestAlgorithm>(
                                              checked.digest.algorithm),
                                          checked.digest.digest));
  const Descriptor& descriptor = checked.descriptor;
  // The digest authenticates the descriptor, not that it is sensible.
  const absl::StatusOr<MerkleParams> params = ParamsOf(descriptor);
  if (!params.ok() || params->block_size < kMinServedBlockSize) {
    return absl::DataLossError(
        absl::StrCat("the server reported a block size of 2^",
                     descriptor.log_block_size, " bytes for ", info.digest()));
  }
  sdk::BlobInfo result{std::move(digest)};
  result.size = descriptor.data_size;
  result.block_size = params->block_size;
  result.salt = descriptor.salt;
  result.format = static_cast<sdk::TreeFormat>(descriptor.format);
  result.root_hash = descriptor.root_hash;
  result.tree_size = info.tree_size();
  result.names.assign(info.names().begin(), info.names().end());
  result.fsverity_signature = info.fsverity_signature();
  result.tree_manifest = info.tree_manifest();
  if (!info.name_statement().empty()) {
    const absl::StatusOr<NameStatement> statement =
        ParseNameStatement(info.name_statement());
    if (statement.ok()) {
      result.name_statement = ToNameStatementInfo(*statement, false);
    }
  }
  return result;
}

absl::StatusOr<MerkleParams> MerkleParamsOf(const sdk::PutOptions& options) {
  MerkleParams params;
  params.hash_algorithm = static_cast<HashAlgorithm>(options.hash_algorithm);
  params.block_size = options.block_size;
  params.salt = options.salt;
  params.format = static_cast<TreeFormat>(options.format);
  RETURN_IF_ERROR(ValidateMerkleParams(params));
  // The server refuses other blocks; saying so here is clearer.
  if (params.block_size < kMinServedBlockSize ||
      params.block_size > kMaxServedBlockSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("the block size must be from ", kMinServedBlockSize,
                     " to ", kMaxServedBlockSize));
  }
  return params;
}

namespace {

absl::StatusOr<sdk::TreeEntry> ToSdkEntry(const TreeEntry& entry) {
  sdk::TreeEntry out;
  out.path = entry.path;
  out.type = static_cast<sdk::TreeEntryType>(entry.type);
  if (entry.type == TreeEntryType::kFile) {
    ASSIGN_OR_RETURN(out.digest,
                     sdk::Digest::FromBytes(static_cast<sdk::DigestAlgorithm>(
                                                entry.digest.algorithm),
                                            entry.digest.digest));
  }
  out.size = entry.size;
  out.executable = entry.executable;
  out.target = entry.target;
  return out;
}

}  // namespace

absl::StatusOr<std::vector<sdk::TreeEntry>> ToSdkEntries(
    const std::vector<TreeEntry>& entries) {
  std::vector<sdk::TreeEntry> out;
  out.reserve(entries.size());
  for (const TreeEntry& entry : entries) {
    ASSIGN_OR_RETURN(out.emplace_back(), ToSdkEntry(entry));
  }
  return out;
}

absl::StatusOr<std::vector<TreeEntry>> ToLibEntries(
    const std::vector<sdk::TreeEntry>& entries) {
  std::vector<TreeEntry> out;
  out.reserve(entries.size());
  for (const sdk::TreeEntry& entry : entries) {
    TreeEntry& lib = out.emplace_back();
    lib.path = entry.path;
    lib.type = static_cast<TreeEntryType>(entry.type);
    if (entry.type == sdk::TreeEntryType::kFile) {
      if (!entry.digest.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(entry.path, ": a file without a digest"));
      }
      lib.digest = ToParsedDigest(*entry.digest);
    }
    lib.size = entry.size;
    lib.executable = entry.executable;
    lib.target = entry.target;
  }
  return out;
}

}  // namespace verity::client
