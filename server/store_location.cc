// Implements ParseStoreLocation.

#include "server/store_location.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace verity::server {

absl::StatusOr<StoreLocation> ParseStoreLocation(absl::string_view text) {
  absl::string_view dir = text;
  if (absl::ConsumePrefix(&dir, "file://")) {
    // file://DIR: the rest is the path, relative or absolute.
  } else if (absl::StrContains(text, "://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--store=", text, ": unknown scheme (a directory, or file://DIR)"));
  }
  if (dir.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--store='", text, "' names no directory"));
  }
  return StoreLocation{std::string(dir)};
}

}  // namespace verity::server
