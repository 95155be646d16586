// Implements the Blob base and the checks every backend shares.

#include "server/store/store.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/hash.h"
#include "lib/name_statement.h"
#include "lib/status_macros.h"
#include "server/store/name_index.h"

namespace verity::server {

Blob::Blob(const ParsedDigest& digest, const Descriptor& descriptor,
           const MerkleParams& params, const TreeGeometry& geometry,
           std::string fsverity_signature)
    : digest_(digest),
      digest_text_(digest.ToString()),
      descriptor_(descriptor),
      params_(params),
      geometry_(geometry),
      fsverity_signature_(std::move(fsverity_signature)) {}

absl::StatusOr<ParsedDigest> Store::ResolveName(absl::string_view name) const {
  ASSIGN_OR_RETURN(NamedBlob named, LookupName(name));
  return named.digest;
}

absl::Status CheckNameWrite(const NameWrite& write) {
  RETURN_IF_ERROR(ValidateBlobName(write.name));
  if (write.statement.size() > kMaxNameStatementSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("the name statement for \"", write.name, "\" is ",
                     write.statement.size(), " bytes; at most ",
                     kMaxNameStatementSize, " may be stored"));
  }
  return absl::OkStatus();
}

absl::Status RunNameCheck(const NameWrite& write, const ParsedDigest& digest,
                          absl::string_view current_statement) {
  if (!write.check) return absl::OkStatus();
  return write.check(digest, current_statement);
}

absl::Status DamagedBlob(absl::string_view digest_text,
                         absl::string_view what) {
  return absl::DataLossError(absl::StrCat("blob ", digest_text, ": ", what));
}

absl::StatusOr<CheckedDescriptor> CheckStoredDescriptor(
    absl::string_view bytes, const ParsedDigest& digest) {
  const std::string text = digest.ToString();
  if (bytes.size() != kDescriptorSize) {
    return DamagedBlob(text, absl::StrCat("descriptor is ", bytes.size(),
                                          " bytes, not ", kDescriptorSize));
  }
  if (ComputeHash(digest.algorithm, AsBytes(bytes)) != digest.digest) {
    return DamagedBlob(text, "descriptor does not hash to the digest");
  }
  absl::StatusOr<Descriptor> descriptor = ParseDescriptor(AsBytes(bytes));
  if (!descriptor.ok()) return DamagedBlob(text, descriptor.status().message());
  if (descriptor->hash_algorithm != digest.algorithm) {
    return DamagedBlob(text, "descriptor has unexpected parameters");
  }
  absl::StatusOr<MerkleParams> params = ParamsOf(*descriptor);
  if (!params.ok()) return DamagedBlob(text, params.status().message());
  absl::StatusOr<TreeGeometry> geometry =
      TreeGeometry::Create(*params, descriptor->data_size);
  if (!geometry.ok()) return DamagedBlob(text, geometry.status().message());
  return CheckedDescriptor{*std::move(descriptor), *std::move(params),
                           *std::move(geometry)};
}

absl::Status CheckReadRange(const Blob& blob, BlobPart part, uint64_t offset,
                            uint64_t length) {
  const bool data = part == BlobPart::kData;
  const uint64_t size =
      data ? blob.geometry().data_size() : blob.geometry().tree_size();
  if (offset <= size && length <= size - offset) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(
      "blob ", blob.digest_text(), ": ", length, " bytes at offset ", offset,
      " are past the end of its ", size, "-byte ", data ? "data" : "tree"));
}

}  // namespace verity::server
