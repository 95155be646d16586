// One record per small blob: its data, Merkle tree, FEC area, descriptor and
// fs-verity signature in one file (the file store) or one object (S3), with a
// fixed-size footer at the end that says where each part is, as a LevelDB
// table's footer does. The data comes first, so that a Put writes it as it
// arrives and the rest once its size is known.
//
// clang-format off
//   [data][tree][fec][descriptor][signature][footer, 64 bytes]
//   footer: magic "VRTYRECD" | version u32 | flags u32 (bit 0: tree manifest) |
//           data size u64 | tree size u64 | fec size u64 | descriptor size u32 |
//           signature size u32 | 8 zero bytes | check: the first 8 bytes of the
//           SHA-256 of the 56 bytes before it
// clang-format on
//
// (Integers little-endian.) Nothing in a record is trusted because of the
// footer: the descriptor must hash to the blob's digest, and every data and
// tree block is verified as it is read; the check only tells a damaged footer
// (DATA_LOSS) from one a newer verityd wrote (UNIMPLEMENTED).

#ifndef VERITYD_SERVER_STORE_BLOB_RECORD_H_
#define VERITYD_SERVER_STORE_BLOB_RECORD_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/store/store.h"

namespace verity::server {

inline constexpr size_t kRecordFooterSize = 64;
// The footer version this code writes and reads.
inline constexpr uint32_t kRecordVersion = 1;
// A blob of at most this many bytes is stored as one record; a larger one
// (or one whose size a Put does not say) as separate parts. docs/storage.md
// has the figures behind it: a record's signature or tree-manifest mark is
// changed by writing the record again, which stays cheap up to here.
inline constexpr uint64_t kMaxRecordDataBytes = uint64_t{1} << 20;
// Larger than any record a store writes, which a reader of a store it does
// not own refuses unread: kMaxRecordDataBytes of data, its tree (at most a
// fifteenth of it, with 1 KiB blocks of 64-byte digests), its FEC area (at
// most 24 parts in 231 of data and tree, with 24 roots), a descriptor and a
// signature (16 KiB at most together) and the footer come to 1.2 MiB.
inline constexpr uint64_t kMaxRecordSize = 2 * kMaxRecordDataBytes;

// Where a record's parts are. Plain value.
struct RecordFooter {
  uint32_t version = kRecordVersion;
  bool tree_manifest = false;
  uint64_t data_size = 0;
  uint64_t tree_size = 0;
  uint64_t fec_size = 0;
  uint32_t descriptor_size = 0;
  uint32_t signature_size = 0;

  // Where `part` starts in the record.
  uint64_t PartOffset(BlobPart part) const;
  uint64_t descriptor_offset() const {
    return data_size + tree_size + fec_size;
  }
  uint64_t signature_offset() const {
    return descriptor_offset() + descriptor_size;
  }
  // The whole record's size, footer included.
  uint64_t record_size() const {
    return signature_offset() + signature_size + kRecordFooterSize;
  }
};

// The footer's kRecordFooterSize bytes.
std::string EncodeRecordFooter(const RecordFooter& footer);

// The footer in `bytes` (the record's last kRecordFooterSize bytes) of a
// record of `record_size` bytes. DATA_LOSS naming the blob if it is damaged
// (its magic, check or sizes wrong); UNIMPLEMENTED if a later version of the
// format wrote it.
absl::StatusOr<RecordFooter> DecodeRecordFooter(absl::string_view bytes,
                                                uint64_t record_size,
                                                absl::string_view digest_text);

// What follows a record's `data_size` bytes of data: the tree, the FEC area,
// the descriptor, the signature and the footer.
std::string RecordTail(uint64_t data_size, absl::string_view tree,
                       absl::string_view fec, absl::string_view descriptor,
                       absl::string_view signature, bool tree_manifest);

// The record whose bytes up to the end of its descriptor are `kept` (with
// footer `footer`), with `signature` and `tree_manifest` in place of its own.
std::string RecordWith(absl::string_view kept, const RecordFooter& footer,
                       absl::string_view signature, bool tree_manifest);

// What a record's descriptor and signature say, checked. Plain value.
struct RecordHead {
  CheckedDescriptor checked;
  std::string signature;
  int fec_roots = 0;  // of its FEC area (0: none, or none of a valid size)
};

// `head` (the record's descriptor and signature, as `footer` places them)
// checked: the descriptor against `digest` (CheckStoredDescriptor), and the
// footer's data and tree sizes against what the descriptor implies (DATA_LOSS
// naming the blob otherwise).
absl::StatusOr<RecordHead> CheckRecordHead(const RecordFooter& footer,
                                           absl::string_view head,
                                           const ParsedDigest& digest);

// Whether `object` ends in a record's footer magic: a record, or a damaged
// one, and never a descriptor (whose last bytes are reserved zeros, or a
// dm-verity root hash that matches 8 given bytes with odds of 2^-64).
bool HasRecordMagic(absl::string_view object);

// The footer of a whole `record` held in memory (DecodeRecordFooter).
absl::StatusOr<RecordFooter> DecodeRecord(absl::string_view record,
                                          absl::string_view digest_text);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_BLOB_RECORD_H_
