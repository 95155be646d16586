// Implements CheckBatchBlob.

#include "client/sdk/batch_read.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/base/status_macros.h"
#include "lib/tree/merkle_builder.h"
#include "proto/convert.h"

namespace verity::client {
namespace {

absl::Status Refuse(const ParsedDigest& trusted, absl::string_view why) {
  return absl::DataLossError(
      absl::StrCat(trusted.ToString(), " from BatchRead: ", why));
}

}  // namespace

absl::StatusOr<std::string> CheckBatchBlob(v1::BatchReadResponse::Blob& blob,
                                           const ParsedDigest& trusted,
                                           const SignatureCheck* signature) {
  if (blob.code() != 0) {
    // gRPC's codes are absl's, 1 to 16.
    const bool known = blob.code() > 0 && blob.code() <= 16;
    return absl::Status(known ? static_cast<absl::StatusCode>(blob.code())
                              : absl::StatusCode::kUnknown,
                        blob.message());
  }
  v1::ReadResponse& read = *blob.mutable_read();
  if (!HasDescriptor(read)) return Refuse(trusted, "no descriptor");
  if (read.tree_blocks_size() > 0 || read.data_offset() != 0) {
    return Refuse(trusted, "not the whole blob in one piece");
  }
  const absl::StatusOr<Descriptor> descriptor = DescriptorOf(read);
  if (!descriptor.ok()) return Refuse(trusted, descriptor.status().message());
  const absl::StatusOr<MerkleParams> params = ParamsOf(*descriptor);
  if (!params.ok()) return Refuse(trusted, params.status().message());
  if (descriptor->data_size != read.data().size()) {
    return Refuse(trusted, "the data is not the size its descriptor says");
  }
  const absl::StatusOr<MerkleTree> tree =
      BuildMerkleTree(*params, AsBytes(read.data()));
  if (!tree.ok()) return Refuse(trusted, tree.status().message());
  if (tree->descriptor.hash_algorithm != trusted.algorithm ||
      tree->digest != trusted.digest) {
    return Refuse(trusted, "the data does not hash to the trusted digest");
  }
  if (signature != nullptr) {
    RETURN_IF_ERROR(signature->Check(trusted, read.fsverity_signature()));
  }
  return std::move(*read.mutable_data());
}

}  // namespace verity::client
