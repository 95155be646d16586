// Encodes and decodes the footer of a small blob's record.

#include "server/store/blob_record.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/base/bytes.h"
#include "lib/base/little_endian.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"
#include "lib/trust/fsverity_signature.h"

namespace verity::server {
namespace {

constexpr absl::string_view kMagic = "VRTYRECD";
constexpr size_t kCheckedBytes = kRecordFooterSize - 8;
constexpr uint32_t kTreeManifestFlag = 1;

std::string CheckOf(absl::string_view checked) {
  return ComputeHash(HashAlgorithm::kSha256, AsBytes(checked)).substr(0, 8);
}

}  // namespace

uint64_t RecordFooter::PartOffset(BlobPart part) const {
  switch (part) {
    case BlobPart::kData:
      return 0;
    case BlobPart::kTree:
      return data_size;
    case BlobPart::kFec:
      return data_size + tree_size;
  }
  return 0;
}

std::string EncodeRecordFooter(const RecordFooter& footer) {
  std::string out(kMagic);
  AppendLittleEndian(footer.version, 4, &out);
  AppendLittleEndian(footer.tree_manifest ? kTreeManifestFlag : 0, 4, &out);
  AppendLittleEndian(footer.data_size, 8, &out);
  AppendLittleEndian(footer.tree_size, 8, &out);
  AppendLittleEndian(footer.fec_size, 8, &out);
  AppendLittleEndian(footer.descriptor_size, 4, &out);
  AppendLittleEndian(footer.signature_size, 4, &out);
  out.append(8, '\0');
  out += CheckOf(out);
  return out;
}

absl::StatusOr<RecordFooter> DecodeRecordFooter(absl::string_view bytes,
                                                uint64_t record_size,
                                                absl::string_view digest_text) {
  const auto damaged = [&](absl::string_view what) {
    return DamagedBlob(digest_text, absl::StrCat("its record's ", what));
  };
  if (bytes.size() != kRecordFooterSize || record_size < kRecordFooterSize) {
    return damaged("footer is missing");
  }
  if (bytes.substr(0, kMagic.size()) != kMagic ||
      bytes.substr(kCheckedBytes) != CheckOf(bytes.substr(0, kCheckedBytes))) {
    return damaged("footer is damaged");
  }
  LittleEndianReader in(bytes.substr(kMagic.size()));
  uint64_t version, flags, descriptor_size, signature_size;
  RecordFooter footer;
  in.Integer(4, &version);
  in.Integer(4, &flags);
  in.Integer(8, &footer.data_size);
  in.Integer(8, &footer.tree_size);
  in.Integer(8, &footer.fec_size);
  in.Integer(4, &descriptor_size);
  in.Integer(4, &signature_size);
  if (version != kRecordVersion) {
    return absl::UnimplementedError(
        absl::StrCat(digest_text, " is a record of version ", version,
                     ", which a later verityd wrote; this one reads version ",
                     kRecordVersion));
  }
  footer.tree_manifest = (flags & kTreeManifestFlag) != 0;
  footer.descriptor_size = static_cast<uint32_t>(descriptor_size);
  footer.signature_size = static_cast<uint32_t>(signature_size);
  // Each bounded by the record first (kMaxRecordSize), so that the sum
  // cannot overflow.
  if (record_size > kMaxRecordSize || footer.data_size > record_size ||
      footer.tree_size > record_size || footer.fec_size > record_size ||
      footer.descriptor_size > kMaxDescriptorSize ||
      footer.signature_size > kMaxFsveritySignatureSize ||
      footer.record_size() != record_size) {
    return damaged(absl::StrCat("footer's sizes do not add up to its ",
                                record_size, " bytes"));
  }
  return footer;
}

std::string RecordTail(uint64_t data_size, absl::string_view tree,
                       absl::string_view fec, absl::string_view descriptor,
                       absl::string_view signature, bool tree_manifest) {
  RecordFooter footer;
  footer.tree_manifest = tree_manifest;
  footer.data_size = data_size;
  footer.tree_size = tree.size();
  footer.fec_size = fec.size();
  footer.descriptor_size = static_cast<uint32_t>(descriptor.size());
  footer.signature_size = static_cast<uint32_t>(signature.size());
  return absl::StrCat(tree, fec, descriptor, signature,
                      EncodeRecordFooter(footer));
}

std::string RecordWith(absl::string_view kept, const RecordFooter& footer,
                       absl::string_view signature, bool tree_manifest) {
  return absl::StrCat(
      kept.substr(0, footer.data_size),
      RecordTail(
          footer.data_size, kept.substr(footer.data_size, footer.tree_size),
          kept.substr(footer.PartOffset(BlobPart::kFec), footer.fec_size),
          kept.substr(footer.descriptor_offset(), footer.descriptor_size),
          signature, tree_manifest));
}

absl::StatusOr<RecordHead> CheckRecordHead(const RecordFooter& footer,
                                           absl::string_view head,
                                           const ParsedDigest& digest) {
  ASSIGN_OR_RETURN(
      CheckedDescriptor checked,
      CheckStoredDescriptor(head.substr(0, footer.descriptor_size), digest));
  if (footer.data_size != checked.descriptor.data_size ||
      footer.tree_size != checked.geometry.tree_size()) {
    return DamagedBlob(digest.ToString(),
                       absl::StrCat("its record holds ", footer.data_size,
                                    " bytes of data and ", footer.tree_size,
                                    " of tree; the descriptor implies ",
                                    checked.descriptor.data_size, " and ",
                                    checked.geometry.tree_size()));
  }
  const int fec_roots = footer.fec_size == 0
                            ? 0
                            : FecRootsOfSize(checked.geometry, footer.fec_size);
  return RecordHead{std::move(checked),
                    std::string(head.substr(footer.descriptor_size)),
                    fec_roots};
}

bool HasRecordMagic(absl::string_view object) {
  return object.size() >= kRecordFooterSize &&
         object.substr(object.size() - kRecordFooterSize, kMagic.size()) ==
             kMagic;
}

absl::StatusOr<RecordFooter> DecodeRecord(absl::string_view record,
                                          absl::string_view digest_text) {
  const size_t footer_at =
      record.size() - std::min(record.size(), kRecordFooterSize);
  return DecodeRecordFooter(record.substr(footer_at), record.size(),
                            digest_text);
}

}  // namespace verity::server
