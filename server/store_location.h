// Where verityd's blobs live, as --store names it: a directory, given as a
// path or a file:// URL.

#ifndef VERITYD_SERVER_STORE_LOCATION_H_
#define VERITYD_SERVER_STORE_LOCATION_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::server {

// Plain value.
struct StoreLocation {
  // The file store's root directory.
  std::string dir;
};

// "DIR" or "file://DIR" (an absolute or relative path). INVALID_ARGUMENT,
// naming --store, for an empty location or an unknown scheme.
absl::StatusOr<StoreLocation> ParseStoreLocation(absl::string_view text);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_LOCATION_H_
