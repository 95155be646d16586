// Implements the Blob base and the checks every backend shares.

#include "server/store/store.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "lib/dm_verity_fec.h"
#include "lib/hash.h"
#include "lib/name_statement.h"
#include "lib/status_macros.h"
#include "server/store/name_index.h"

namespace verity::server {

Blob::Blob(const ParsedDigest& digest, const Descriptor& descriptor,
           const MerkleParams& params, const TreeGeometry& geometry,
           std::string fsverity_signature, int fec_roots)
    : digest_(digest),
      digest_text_(digest.ToString()),
      descriptor_(descriptor),
      params_(params),
      geometry_(geometry),
      fsverity_signature_(std::move(fsverity_signature)),
      fec_roots_(fec_roots) {}

absl::Status Blob::Rewrite(BlobPart part, uint64_t /*offset*/,
                           absl::Span<const uint8_t> /*bytes*/) const {
  return absl::UnimplementedError(
      absl::StrCat("blob ", digest_text_, ": this store cannot rewrite its ",
                   PartName(part)));
}

absl::Status ReadAndWait(const Blob& blob, BlobPart part, uint64_t offset,
                         absl::Span<uint8_t> out) {
  std::optional<absl::Status> now = blob.TryReadNow(part, offset, out);
  if (now.has_value()) return *now;
  absl::Notification done;
  absl::Status status;
  blob.ReadAsync(part, offset, Buffer::Allocate(out.size()),
                 [&](absl::StatusOr<Buffer> read) {
                   if (read.ok()) {
                     std::copy_n(read->span().begin(), out.size(), out.begin());
                   }
                   status = read.status();
                   done.Notify();
                 });
  done.WaitForNotification();
  return status;
}

uint64_t FecBlocks(const TreeGeometry& geometry) {
  return geometry.data_block_count() +
         geometry.tree_size() / geometry.block_size();
}

uint64_t PartSize(const TreeGeometry& geometry, int fec_roots, BlobPart part) {
  switch (part) {
    case BlobPart::kData:
      return geometry.data_size();
    case BlobPart::kTree:
      return geometry.tree_size();
    case BlobPart::kFec:
      return fec_roots == 0 ? 0
                            : FecSize(FecBlocks(geometry), fec_roots,
                                      geometry.block_size());
  }
  return 0;
}

int FecRootsOfSize(const TreeGeometry& geometry, uint64_t size) {
  for (int roots = kMinFecRoots; roots <= kMaxFecRoots; ++roots) {
    if (PartSize(geometry, roots, BlobPart::kFec) == size) return roots;
  }
  return 0;
}

absl::StatusOr<std::optional<FecStreamEncoder>> FecStreamFor(
    const MerkleParams& params, std::optional<uint64_t> size, int fec_roots) {
  if (fec_roots == 0 || size.value_or(0) == 0) return std::nullopt;
  ASSIGN_OR_RETURN(const TreeGeometry geometry,
                   TreeGeometry::Create(params, *size));
  if (PartSize(geometry, fec_roots, BlobPart::kFec) > kMaxStreamedFecBytes) {
    return std::nullopt;
  }
  return FecStreamEncoder::Create(fec_roots, params.block_size,
                                  FecBlocks(geometry));
}

absl::StatusOr<std::string> FinishFecArea(FecStreamEncoder& stream,
                                          absl::string_view tree) {
  RETURN_IF_ERROR(stream.PadBlock());
  RETURN_IF_ERROR(stream.Update(AsBytes(tree)));
  return stream.Finish();
}

absl::string_view PartName(BlobPart part) {
  switch (part) {
    case BlobPart::kData:
      return "data";
    case BlobPart::kTree:
      return "tree";
    case BlobPart::kFec:
      return "fec";
  }
  return "?";
}

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
  if (bytes.size() > kMaxDescriptorSize) {
    return DamagedBlob(
        text, absl::StrCat("descriptor is ", bytes.size(), " bytes, more than ",
                           kMaxDescriptorSize));
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
  const uint64_t size = PartSize(blob.geometry(), blob.fec_roots(), part);
  if (offset <= size && length <= size - offset) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(
      "blob ", blob.digest_text(), ": ", length, " bytes at offset ", offset,
      " are past the end of its ", size, "-byte ", PartName(part)));
}

}  // namespace verity::server
