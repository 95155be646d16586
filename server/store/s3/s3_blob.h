// A blob of the S3 store opened for reading: its descriptor, checked against
// the digest, and ranged GETs of its data, tree and FEC objects, answered on
// the S3 client's thread; or, for a small blob stored as one record, all of
// it, read with one GET at open and answered from memory. Nothing it returns is
// trusted (VerifiedBlob verifies it), but a short object is reported as the
// damage it is.
//
// FEC repairs: S3 objects are written whole, and every replica reads the same
// ones, so a block FEC rebuilt is not written into the object (a rewrite of a
// GiB object for one 4 KiB block, racing other replicas doing the same).
// Rewrite() keeps it in memory, laid over what S3 returns for as long as the
// blob stays open, and marks the blob damaged in the bucket (s3_layout.h):
// the next Put of the same content replaces its objects and lifts the mark.

#ifndef VERITYD_SERVER_STORE_S3_S3_BLOB_H_
#define VERITYD_SERVER_STORE_S3_S3_BLOB_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/store/blob_record.h"
#include "server/store/s3/s3_client.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/store.h"

namespace verity::server {

// Repaired blocks a blob keeps in memory, at most.
inline constexpr uint64_t kMaxRepairedBytes = uint64_t{16} << 20;

// Thread-safe; immutable but for the repaired blocks. Shares the client with
// its store, which it may outlive. A blob deleted after it was opened reads as
// DATA_LOSS (its objects are gone), not as its old content.
class S3Blob final : public Blob {
 public:
  // A blob stored as one record: its bytes (the record's size and part
  // sizes checked against its descriptor: CheckRecordHead) and footer.
  struct Record {
    std::shared_ptr<const std::string> bytes;  // null: parts are objects
    RecordFooter footer;
  };

  // `fec_roots`: of its FEC object or area (0: none). `log` takes a line for
  // the operator.
  S3Blob(const CheckedDescriptor& checked, const ParsedDigest& digest,
         std::string fsverity_signature, int fec_roots, const S3Layout& layout,
         std::shared_ptr<S3Client> client,
         std::function<void(absl::string_view)> log, Record record = {});

  // A record's bytes, always here; a blob of objects', never (every byte is
  // a GET away). OUT_OF_RANGE past the end.
  std::optional<absl::Status> TryReadNow(
      BlobPart part, uint64_t offset, absl::Span<uint8_t> out) const override;
  // One ranged GET into a buffer of its own (a record: a copy), answered on
  // the S3 client's thread. DATA_LOSS naming the blob and offset if the
  // object is missing or shorter than the descriptor implies; UNAVAILABLE if
  // S3 cannot be reached.
  void ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                 ReadDone done) const override;
  void Prefetch(BlobPart, uint64_t, uint64_t) const override {}
  // Keeps `bytes` (a data or tree block, rebuilt and verified) over what S3
  // returns for them, and marks the blob damaged in the bucket once (a mark
  // that cannot be written is logged, and tried again at the next repair).
  // RESOURCE_EXHAUSTED past kMaxRepairedBytes.
  absl::Status Rewrite(BlobPart part, uint64_t offset,
                       absl::Span<const uint8_t> bytes) const override;

 private:
  using BlockKey = std::pair<BlobPart, uint64_t>;  // part, offset

  // The status of `response` to a GET of `length` bytes at `offset`.
  absl::Status Check(BlobPart part, uint64_t offset, uint64_t length,
                     const S3Response& response) const;
  // Copies the repaired blocks within [offset, offset + bytes.size()) of
  // `part` over `bytes`.
  void LayRepairs(BlobPart part, uint64_t offset,
                  absl::Span<uint8_t> bytes) const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Mark(BlobPart part, uint64_t offset) const;
  // Copies `out.size()` bytes of `part` at `offset` from the record, with
  // the repaired blocks laid over them.
  absl::Status ReadRecord(BlobPart part, uint64_t offset,
                          absl::Span<uint8_t> out) const;
  const std::string& KeyOf(BlobPart part) const;

  const std::shared_ptr<S3Client> client_;
  const std::string data_key_;
  const std::string tree_key_;
  const std::string fec_key_;
  const std::string damaged_key_;
  const std::function<void(absl::string_view)> log_;
  const Record record_;
  mutable absl::Mutex mu_;
  mutable std::map<BlockKey, std::string> repaired_ ABSL_GUARDED_BY(mu_);
  mutable uint64_t repaired_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  mutable bool marked_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_S3_BLOB_H_
