// Implements S3Blob: one ranged GET per read, into the caller's buffer.

#include "server/store/s3/s3_blob.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace verity::server {

S3Blob::S3Blob(const CheckedDescriptor& checked, const ParsedDigest& digest,
               std::string fsverity_signature, const S3Layout& layout,
               S3Client* client)
    : Blob(digest, checked.descriptor, checked.params, checked.geometry,
           std::move(fsverity_signature)),
      client_(client),
      data_key_(layout.BlobKey(digest, BlobObject::kData)),
      tree_key_(layout.BlobKey(digest, BlobObject::kTree)) {}

std::optional<absl::Status> S3Blob::TryReadNow(BlobPart part, uint64_t offset,
                                               absl::Span<uint8_t> out) const {
  if (absl::Status range = CheckReadRange(*this, part, offset, out.size());
      !range.ok() || out.empty()) {
    return range;
  }
  return std::nullopt;
}

void S3Blob::ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                       ReadDone done) const {
  const uint64_t length = into.size();
  if (absl::Status range = CheckReadRange(*this, part, offset, length);
      !range.ok() || length == 0) {
    S3Response refused;
    refused.status = range;
    client_->Answer(std::move(refused),
                    [done = std::move(done)](S3Response response) mutable {
                      if (!response.status.ok()) {
                        std::move(done)(response.status);
                      } else {
                        std::move(done)(Buffer());
                      }
                    });
    return;
  }
  const bool data = part == BlobPart::kData;
  // curl writes the body straight into the caller's buffer, which the
  // completion owns until the answer.
  auto bytes = std::make_shared<Buffer>(std::move(into));
  S3Request request;
  request.op = data ? "GetData" : "GetTree";
  request.key = data ? data_key_ : tree_key_;
  request.headers.push_back(
      absl::StrCat("Range: bytes=", offset, "-", offset + length - 1));
  request.into = bytes->span();
  // The blob and the buffer ride along until the answer.
  client_->Start(
      std::move(request),
      [self = std::static_pointer_cast<const S3Blob>(shared_from_this()), part,
       offset, bytes, done = std::move(done)](S3Response response) mutable {
        absl::Status status =
            self->Check(part, offset, bytes->size(), response);
        if (!status.ok()) {
          std::move(done)(status);
          return;
        }
        std::move(done)(std::move(*bytes));
      });
}

absl::Status S3Blob::Check(BlobPart part, uint64_t offset, uint64_t length,
                           const S3Response& response) const {
  const bool data = part == BlobPart::kData;
  const uint64_t file_size =
      data ? geometry().data_size() : geometry().tree_size();
  const absl::string_view object = data ? "data" : "tree";
  // The descriptor says the object holds these bytes: if S3 has less, or
  // none, the blob is damaged, whatever the HTTP status.
  if (response.status.ok() && response.bytes < length) {
    return DamagedBlob(
        digest_text(),
        absl::StrCat(object, " object ends at offset ", offset + response.bytes,
                     ", short of its recorded size ", file_size));
  }
  if (absl::IsOutOfRange(response.status) ||
      absl::IsNotFound(response.status)) {
    return DamagedBlob(digest_text(),
                       absl::StrCat(object, " object has no bytes at offset ",
                                    offset, ": ", response.status.message()));
  }
  return response.status;
}

}  // namespace verity::server
