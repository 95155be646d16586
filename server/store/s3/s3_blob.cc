// Implements S3Blob: one ranged GET per read, into the caller's buffer.

#include "server/store/s3/s3_blob.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace verity::server {

S3Blob::S3Blob(const CheckedDescriptor& checked, const ParsedDigest& digest,
               const S3Layout& layout, S3Client* client)
    : Blob(digest, checked.descriptor, checked.params, checked.geometry),
      client_(client),
      data_key_(layout.BlobKey(digest, BlobObject::kData)),
      tree_key_(layout.BlobKey(digest, BlobObject::kTree)) {}

void S3Blob::Read(BlobPart part, uint64_t offset, absl::Span<uint8_t> out,
                  ReadDone done) const {
  const bool data = part == BlobPart::kData;
  const uint64_t size = data ? geometry().data_size() : geometry().tree_size();
  const absl::string_view object = data ? "data" : "tree";
  if (offset > size || out.size() > size - offset) {
    std::move(done)(absl::OutOfRangeError(absl::StrCat(
        "blob ", digest_text(), ": ", out.size(), " bytes at offset ", offset,
        " are past the end of its ", size, "-byte ", object)));
    return;
  }
  if (out.empty()) {
    std::move(done)(absl::OkStatus());
    return;
  }
  S3Request request;
  request.op = data ? "GetData" : "GetTree";
  request.key = data ? data_key_ : tree_key_;
  request.headers.push_back(
      absl::StrCat("Range: bytes=", offset, "-", offset + out.size() - 1));
  request.into = out;
  client_->Start(std::move(request), [this, object, offset, size = out.size(),
                                      file_size = size, done = std::move(done)](
                                         S3Response response) mutable {
    absl::Status status = response.status;
    // The descriptor says the object holds these bytes: if S3 has less,
    // or none, the blob is damaged, whatever the HTTP status.
    if (status.ok() && response.bytes < size) {
      status =
          DamagedBlob(digest_text(),
                      absl::StrCat(object, " object ends at offset ",
                                   offset + response.bytes,
                                   ", short of its recorded size ", file_size));
    } else if (absl::IsOutOfRange(status) || absl::IsNotFound(status)) {
      status = DamagedBlob(digest_text(),
                           absl::StrCat(object,
                                        " object has no bytes at "
                                        "offset ",
                                        offset, ": ", status.message()));
    }
    std::move(done)(status);
  });
}

}  // namespace verity::server
