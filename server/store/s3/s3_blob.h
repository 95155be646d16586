// A blob of the S3 store opened for reading: its descriptor, checked against
// the digest, and ranged GETs of its data and tree objects, answered on the S3
// client's thread. Nothing it returns is trusted (VerifiedBlob verifies it),
// but a short object is reported as the damage it is.

#ifndef VERITYD_SERVER_STORE_S3_S3_BLOB_H_
#define VERITYD_SERVER_STORE_S3_S3_BLOB_H_

#include <cstdint>
#include <optional>
#include <string>

#include "server/store/s3/s3_client.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/store.h"

namespace verity::server {

// Immutable and thread-safe. The client must outlive it. A blob deleted after
// it was opened reads as DATA_LOSS (its objects are gone), not as its old
// content.
class S3Blob final : public Blob {
 public:
  S3Blob(const CheckedDescriptor& checked, const ParsedDigest& digest,
         std::string fsverity_signature, const S3Layout& layout,
         S3Client* client);

  // Never here: every byte is a GET away. OUT_OF_RANGE past the end.
  std::optional<absl::Status> TryReadNow(
      BlobPart part, uint64_t offset, absl::Span<uint8_t> out) const override;
  // One ranged GET into a buffer of its own, answered on the S3 client's
  // thread. DATA_LOSS naming the blob and offset if the object is missing or
  // shorter than the descriptor implies; UNAVAILABLE if S3 cannot be reached.
  void ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                 ReadDone done) const override;
  void Prefetch(BlobPart, uint64_t, uint64_t) const override {}

 private:
  // The status of `response` to a GET of `length` bytes at `offset`.
  absl::Status Check(BlobPart part, uint64_t offset, uint64_t length,
                     const S3Response& response) const;

  S3Client* const client_;
  const std::string data_key_;
  const std::string tree_key_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_S3_BLOB_H_
