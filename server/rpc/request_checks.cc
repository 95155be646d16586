// Implements the service's request checks on lib's parsers and the store's
// name rules, so every call refuses the same things the same way.

#include "server/rpc/request_checks.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/tree/read_plan.h"
#include "lib/trust/fsverity_signature.h"
#include "lib/trust/name_statement.h"
#include "proto/convert.h"
#include "server/store/name_index.h"

namespace verity::server {

absl::StatusOr<BlobSelector> CheckBlobSelector(absl::string_view digest,
                                               absl::string_view name,
                                               bool by_name) {
  BlobSelector blob;
  blob.by_name = by_name;
  if (by_name) {
    RETURN_IF_ERROR(ValidateBlobName(name));
    blob.name = std::string(name);
    return blob;
  }
  if (digest.empty()) {
    return absl::InvalidArgumentError(
        "the request names no blob: set digest or name");
  }
  ASSIGN_OR_RETURN(blob.digest, ParseDigest(digest));
  return blob;
}

absl::StatusOr<CheckedRead> CheckReadRequest(const v1::ReadRequest& request,
                                             size_t max_have_tree_blocks) {
  ASSIGN_OR_RETURN(const PriorityClass priority_class,
                   PriorityClassFromProto(request.priority_class()));
  const size_t held = request.have_tree_blocks_size();
  if (held > max_have_tree_blocks) {
    return absl::InvalidArgumentError(
        absl::StrCat("have_tree_blocks lists ", held, " blocks; at most ",
                     max_have_tree_blocks, " may be given"));
  }
  CheckedRead read;
  ASSIGN_OR_RETURN(
      read.blob,
      CheckBlobSelector(request.digest(), request.name(),
                        request.blob_case() == v1::ReadRequest::kName));
  read.priority_class = priority_class;
  read.offset = request.offset();
  // A zero length asks for the rest of the blob.
  if (request.length() != 0) read.length = request.length();
  RETURN_IF_ERROR(ValidateRange(read.offset, read.length));
  return read;
}

namespace {

absl::Status CheckStatementSize(absl::string_view statement) {
  if (statement.size() <= kMaxNameStatementSize) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("name_statement is ", statement.size(), " bytes; at most ",
                   kMaxNameStatementSize, " may be given"));
}

// `text`, the digest of content hashed with `params`; `field` names it.
absl::StatusOr<ParsedDigest> CheckDigestOf(absl::string_view text,
                                           const MerkleParams& params,
                                           absl::string_view field) {
  ASSIGN_OR_RETURN(ParsedDigest digest, ParseDigest(text));
  if (digest.algorithm != params.hash_algorithm) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " uses another hash algorithm than params"));
  }
  return digest;
}

// Content of `size` bytes that dm-verity does not cover is refused before
// it is sent.
absl::Status CheckSizeFor(const MerkleParams& params, uint64_t size) {
  if (params.format != TreeFormat::kDmVerity) return absl::OkStatus();
  return TreeGeometry::Create(params, size).status();
}

}  // namespace

absl::StatusOr<CheckedPutHeader> CheckPutHeader(const v1::PutHeader& header) {
  CheckedPutHeader checked;
  ASSIGN_OR_RETURN(checked.params, TreeParamsFromProto(header.params()));
  if (!header.expected_digest().empty()) {
    ASSIGN_OR_RETURN(checked.expected,
                     CheckDigestOf(header.expected_digest(), checked.params,
                                   "expected_digest"));
  }
  if (!header.name().empty()) RETURN_IF_ERROR(ValidateBlobName(header.name()));
  checked.name = header.name();
  if (!header.name_statement().empty() && header.name().empty()) {
    return absl::InvalidArgumentError(
        "a Put's name_statement needs its name: set name too");
  }
  RETURN_IF_ERROR(CheckStatementSize(header.name_statement()));
  checked.name_statement = header.name_statement();
  if (!header.fsverity_signature().empty()) {
    RETURN_IF_ERROR(CheckFsveritySignatureFormat(header.fsverity_signature()));
  }
  checked.fsverity_signature = header.fsverity_signature();
  checked.tree_manifest = header.tree_manifest();
  if (header.has_content_size()) {
    checked.size = header.content_size();
    RETURN_IF_ERROR(CheckSizeFor(checked.params, *checked.size));
  }
  return checked;
}

absl::StatusOr<uint64_t> CheckBatchUpdateRequest(
    const v1::BatchUpdateRequest& request) {
  if (static_cast<size_t>(request.blobs_size()) > kMaxBatchUpdateBlobs) {
    return absl::InvalidArgumentError(
        absl::StrCat("BatchUpdate sends ", request.blobs_size(),
                     " blobs; at most ", kMaxBatchUpdateBlobs));
  }
  uint64_t bytes = 0;
  for (const v1::BatchUpdateRequest::Blob& blob : request.blobs()) {
    bytes += blob.data().size();
  }
  if (bytes > kMaxBatchUpdateBytes) {
    return absl::InvalidArgumentError(absl::StrCat("BatchUpdate sends ", bytes,
                                                   " bytes of data; at most ",
                                                   kMaxBatchUpdateBytes));
  }
  return bytes;
}

absl::StatusOr<CheckedBatchBlob> CheckBatchUpdateBlob(
    const v1::BatchUpdateRequest::Blob& blob) {
  CheckedBatchBlob checked;
  ASSIGN_OR_RETURN(checked.params, TreeParamsFromProto(blob.params()));
  if (blob.digest().empty()) {
    return absl::InvalidArgumentError("a BatchUpdate blob needs its digest");
  }
  ASSIGN_OR_RETURN(checked.digest,
                   CheckDigestOf(blob.digest(), checked.params, "digest"));
  if (blob.data().size() > kMaxBatchUpdateBlobBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a blob of ", blob.data().size(), " bytes is over BatchUpdate's ",
        kMaxBatchUpdateBlobBytes, "; send it with Put"));
  }
  RETURN_IF_ERROR(CheckSizeFor(checked.params, blob.data().size()));
  return checked;
}

absl::StatusOr<CheckedSetName> CheckSetNameRequest(
    const v1::SetNameRequest& request) {
  CheckedSetName checked;
  RETURN_IF_ERROR(ValidateBlobName(request.name()));
  checked.name = request.name();
  if (request.digest().empty()) {
    return absl::InvalidArgumentError("SetName needs the blob's digest");
  }
  ASSIGN_OR_RETURN(checked.digest, ParseDigest(request.digest()));
  RETURN_IF_ERROR(CheckStatementSize(request.name_statement()));
  checked.name_statement = request.name_statement();
  return checked;
}

absl::StatusOr<std::vector<ParsedDigest>> CheckFindMissingRequest(
    const v1::FindMissingRequest& request) {
  if (static_cast<size_t>(request.digests_size()) > kMaxFindMissingDigests) {
    return absl::InvalidArgumentError(
        absl::StrCat("FindMissing asks about ", request.digests_size(),
                     " digests; at most ", kMaxFindMissingDigests));
  }
  std::vector<ParsedDigest> digests;
  absl::flat_hash_set<ParsedDigest> seen;
  for (const std::string& text : request.digests()) {
    ASSIGN_OR_RETURN(ParsedDigest digest, ParseDigest(text));
    if (seen.insert(digest).second) digests.push_back(std::move(digest));
  }
  return digests;
}

absl::StatusOr<std::vector<v1::ReadRequest>> CheckBatchReadRequest(
    const v1::BatchReadRequest& request) {
  if (static_cast<size_t>(request.digests_size()) > kMaxBatchReadBlobs) {
    return absl::InvalidArgumentError(
        absl::StrCat("BatchRead asks for ", request.digests_size(),
                     " blobs; at most ", kMaxBatchReadBlobs));
  }
  std::vector<v1::ReadRequest> reads;
  reads.reserve(request.digests_size());
  for (const std::string& text : request.digests()) {
    v1::ReadRequest& read = reads.emplace_back();
    read.set_digest(text);
    read.set_priority_class(request.priority_class());
    read.set_have_whole_tree(true);
    // Each read's own check would refuse it alone; a malformed request is
    // the caller's mistake, refused whole as FindMissing refuses it.
    RETURN_IF_ERROR(CheckReadRequest(read, 0).status());
  }
  return reads;
}

size_t ListPageSize(const v1::ListRequest& request) {
  if (request.page_size() == 0) return kMaxListPageSize;
  return std::min<size_t>(request.page_size(), kMaxListPageSize);
}

}  // namespace verity::server
