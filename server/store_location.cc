// Implements ParseStoreLocation.

#include "server/store_location.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace verity::server {
namespace {

// S3's rules for bucket names (3-63 of a-z, 0-9, '.', '-', starting and
// ending with a letter or digit), which every S3 implementation accepts.
bool IsBucketName(absl::string_view name) {
  if (name.size() < 3 || name.size() > 63) return false;
  for (const char c : name) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '.' &&
        c != '-') {
      return false;
    }
  }
  return absl::ascii_isalnum(name.front()) && absl::ascii_isalnum(name.back());
}

absl::StatusOr<StoreLocation> ParseS3(absl::string_view text,
                                      absl::string_view rest) {
  StoreLocation location;
  location.kind = StoreLocation::Kind::kS3;
  const size_t slash = rest.find('/');
  location.bucket = std::string(rest.substr(0, slash));
  if (!IsBucketName(location.bucket)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--store=", text, ": '", location.bucket,
                     "' is not an S3 bucket name (3-63 of a-z 0-9 . -)"));
  }
  if (slash != absl::string_view::npos) {
    location.prefix = std::string(rest.substr(slash + 1));
    if (!location.prefix.empty() && location.prefix.back() != '/') {
      location.prefix += '/';
    }
  }
  return location;
}

}  // namespace

absl::StatusOr<StoreLocation> ParseStoreLocation(absl::string_view text) {
  absl::string_view rest = text;
  if (absl::ConsumePrefix(&rest, "s3://")) return ParseS3(text, rest);
  if (absl::ConsumePrefix(&rest, "file://")) {
    // file://DIR: the rest is the path, relative or absolute.
  } else if (absl::StrContains(text, "://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--store=", text,
        ": unknown scheme (a directory, file://DIR or s3://BUCKET/PREFIX)"));
  }
  if (rest.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--store='", text, "' names no directory"));
  }
  StoreLocation location;
  location.dir = std::string(rest);
  return location;
}

}  // namespace verity::server
