// How verityd reaches an S3 bucket, from its flags and the environment the AWS
// tools use: the endpoint and its addressing, the region, and the credentials
// (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the
// shared credentials file).

#ifndef VERITYD_SERVER_S3_SETTINGS_H_
#define VERITYD_SERVER_S3_SETTINGS_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/store/s3/s3_client.h"

namespace verity::server {

// What the flags say. Plain value.
struct S3Settings {
  std::string bucket;
  // --s3_endpoint: "" for AWS (https://s3.REGION.amazonaws.com).
  std::string endpoint;
  // --s3_region: "" for AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1.
  std::string region;
  // --s3_addressing: "path", "virtual", or "auto" (virtual for AWS, path for
  // any other endpoint, which is what MinIO, radosgw and most others want).
  std::string addressing = "auto";
  // --s3_ca: a PEM bundle; "" for the system's.
  std::string ca_file;
};

// Reads an environment variable; nullopt if unset.
using Getenv = std::function<std::optional<std::string>(const char*)>;

// The process's own environment.
std::optional<std::string> ProcessEnv(const char* name);

// INVALID_ARGUMENT naming the flag for a bad setting; FAILED_PRECONDITION if
// no credentials are found anywhere.
absl::StatusOr<S3ClientOptions> ResolveS3Client(const S3Settings& settings,
                                                const Getenv& getenv);

// The credentials of `profile` in an AWS shared credentials file (INI:
// "[profile]" sections of "key = value" lines, '#' and ';' comments).
// NOT_FOUND if the profile or its keys are missing.
absl::StatusOr<S3Credentials> ParseCredentialsFile(absl::string_view contents,
                                                   absl::string_view profile);

}  // namespace verity::server

#endif  // VERITYD_SERVER_S3_SETTINGS_H_
