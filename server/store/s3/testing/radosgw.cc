// Implements the radosgw test options.

#include "server/store/s3/testing/radosgw.h"

#include <cstdlib>
#include <string>

namespace verity::server {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

bool HaveTestRadosgw() { return !Env("S3_ENDPOINT").empty(); }

S3ClientOptions TestRadosgwOptions() {
  S3ClientOptions options;
  options.endpoint = Env("S3_ENDPOINT");
  options.region = Env("AWS_REGION");
  options.bucket = Env("S3_BUCKET");
  options.credentials.access_key_id = Env("AWS_ACCESS_KEY_ID");
  options.credentials.secret_access_key = Env("AWS_SECRET_ACCESS_KEY");
  return options;
}

}  // namespace verity::server
