// The XML of S3's answers verityd reads, parsed with pugixml, and the one
// request body it writes (CompleteMultipartUpload).

#ifndef VERITYD_SERVER_STORE_S3_S3_XML_H_
#define VERITYD_SERVER_STORE_S3_S3_XML_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

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

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_S3_XML_H_
