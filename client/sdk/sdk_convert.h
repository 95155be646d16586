// Conversions between the SDK's public types and lib's and the wire's types:
// the one place that knows both sides.

#ifndef VERITYD_CLIENT_SDK_SDK_CONVERT_H_
#define VERITYD_CLIENT_SDK_SDK_CONVERT_H_

#include "absl/status/statusor.h"
#include "lib/base/priority_class.h"
#include "lib/manifest/tree_manifest.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "lib/trust/name_statement.h"
#include "proto/verity/v1/verity.pb.h"
#include "verity/blob_info.h"
#include "verity/digest.h"
#include "verity/options.h"
#include "verity/tree.h"

namespace verity::client {

ParsedDigest ToParsedDigest(const sdk::Digest& digest);

// The public enum as lib's (the public headers include nothing of lib/), whose
// proto/convert mapping is then the only one to the wire.
PriorityClass ToPriorityClass(sdk::PriorityClass priority);

// What `statement` says, for callers; `verified` if it passed NameTrust.
sdk::NameStatementInfo ToNameStatementInfo(const NameStatement& statement,
                                           bool verified);

// The checked report: DATA_LOSS unless its descriptor hashes to its digest
// and, if `expected` is given, that is the expected digest (CheckBlobInfo).
// A name statement in it is parsed, not verified (one that does not parse is
// left out: unverified, it is only the server's word anyway).
absl::StatusOr<sdk::BlobInfo> BlobInfoFromProto(
    const v1::BlobInfo& info, const ParsedDigest* expected = nullptr);

// A tree's entries, lib's way and the SDK's (same order). INVALID_ARGUMENT
// for a file without a digest, or one of an unknown algorithm.
absl::StatusOr<std::vector<sdk::TreeEntry>> ToSdkEntries(
    const std::vector<TreeEntry>& entries);
absl::StatusOr<std::vector<TreeEntry>> ToLibEntries(
    const std::vector<sdk::TreeEntry>& entries);

// INVALID_ARGUMENT unless the options describe a valid tree.
absl::StatusOr<MerkleParams> MerkleParamsOf(const sdk::PutOptions& options);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_SDK_CONVERT_H_
