// The XML of S3's answers verityd reads, parsed with pugixml, and the
// request bodies it writes (CompleteMultipartUpload, DeleteObjects).

#ifndef VERITYD_SERVER_STORE_S3_S3_XML_H_
#define VERITYD_SERVER_STORE_S3_S3_XML_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace verity::server {

// <Error><Code/><Message/></Error>; both empty if the body is not one.
struct S3Error {
  std::string code;
  std::string message;
};
S3Error ParseS3Error(absl::string_view body);

// ListObjectsV2.
struct S3Listing {
  struct Object {
    std::string key;
    uint64_t size = 0;
    // By the bucket's clock; InfiniteFuture if S3 gave none it could read
    // (so that nothing takes it for old).
    absl::Time last_modified = absl::InfiniteFuture();
  };
  std::vector<Object> objects;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_continuation_token;
};
absl::StatusOr<S3Listing> ParseListObjects(absl::string_view body);

// CreateMultipartUpload's UploadId.
absl::StatusOr<std::string> ParseUploadId(absl::string_view body);

// ListMultipartUploads.
struct S3Uploads {
  struct Upload {
    std::string key;
    std::string upload_id;
    std::string initiated;  // ISO 8601, as S3 gives it
  };
  std::vector<Upload> uploads;
  bool truncated = false;
  std::string next_key_marker;
  std::string next_upload_id_marker;
};
absl::StatusOr<S3Uploads> ParseListUploads(absl::string_view body);

// The body of CompleteMultipartUpload for parts 1..etags.size().
std::string CompleteMultipartBody(const std::vector<std::string>& etags);

// The body of a quiet DeleteObjects of `keys` (at most 1000, S3's limit):
// S3 then answers only the keys it failed to delete.
std::string DeleteObjectsBody(absl::Span<const std::string> keys);

// DeleteObjects' answer: the keys it failed to delete, with S3's error.
struct S3DeleteError {
  std::string key;
  S3Error error;
};
absl::StatusOr<std::vector<S3DeleteError>> ParseDeleteResult(
    absl::string_view body);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_S3_XML_H_
