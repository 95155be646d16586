// Where verityd's blobs live, as --store names it: a directory (a path or a
// file:// URL), or an S3 bucket and prefix (s3://BUCKET/PREFIX).

#ifndef VERITYD_SERVER_STORE_LOCATION_H_
#define VERITYD_SERVER_STORE_LOCATION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::server {

// Plain value.
struct StoreLocation {
  enum class Kind { kFile, kS3 };
  Kind kind = Kind::kFile;
  // kFile: the file store's root directory.
  std::string dir;
  // kS3: the bucket, and the prefix every object goes under ("" or ending in
  // '/').
  std::string bucket;
  std::string prefix;
};

// "DIR", "file://DIR" (an absolute or relative path) or
// "s3://BUCKET[/PREFIX]". INVALID_ARGUMENT, naming --store, for an empty
// location, a bad bucket name or an unknown scheme.
absl::StatusOr<StoreLocation> ParseStoreLocation(absl::string_view text);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_LOCATION_H_
