// Implements the S3 settings. The secret parts go into S3ClientOptions and
// nowhere else: no message here ever includes them.

#include "server/s3_settings.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"

namespace verity::server {
namespace {

// A credentials file is small; anything bigger is not one.
constexpr size_t kMaxCredentialsFileBytes = 1 << 20;

std::string FirstSet(const Getenv& getenv, const char* a, const char* b) {
  if (std::optional<std::string> value = getenv(a); value && !value->empty()) {
    return *value;
  }
  if (std::optional<std::string> value = getenv(b); value && !value->empty()) {
    return *value;
  }
  return "";
}

absl::StatusOr<S3Credentials> FromEnvironmentOrFile(const Getenv& getenv) {
  S3Credentials credentials;
  credentials.access_key_id = getenv("AWS_ACCESS_KEY_ID").value_or("");
  credentials.secret_access_key = getenv("AWS_SECRET_ACCESS_KEY").value_or("");
  credentials.session_token = getenv("AWS_SESSION_TOKEN").value_or("");
  if (!credentials.access_key_id.empty() &&
      !credentials.secret_access_key.empty()) {
    return credentials;
  }
  std::string file = getenv("AWS_SHARED_CREDENTIALS_FILE").value_or("");
  if (file.empty()) {
    const std::string home = getenv("HOME").value_or("");
    if (!home.empty()) file = JoinPath(home, ".aws/credentials");
  }
  std::string profile = getenv("AWS_PROFILE").value_or("");
  if (profile.empty()) profile = "default";
  absl::StatusOr<std::string> contents =
      file.empty() ? absl::NotFoundError("no HOME")
                   : ReadSmallFile(file, kMaxCredentialsFileBytes);
  if (contents.ok()) {
    absl::StatusOr<S3Credentials> parsed =
        ParseCredentialsFile(*contents, profile);
    if (parsed.ok()) return parsed;
    return absl::FailedPreconditionError(
        absl::StrCat("no S3 credentials for profile '", profile, "' in ", file,
                     ": ", parsed.status().message()));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
      "give them in a credentials file (AWS_SHARED_CREDENTIALS_FILE, else "
      "~/.aws/credentials; ",
      file.empty() ? "no HOME" : contents.status().message(), ")"));
}

}  // namespace

std::optional<std::string> ProcessEnv(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

absl::StatusOr<S3Credentials> ParseCredentialsFile(absl::string_view contents,
                                                   absl::string_view profile) {
  S3Credentials credentials;
  bool in_profile = false, found = false;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      in_profile = absl::StripAsciiWhitespace(
                       line.substr(1, line.size() - 2)) == profile;
      found = found || in_profile;
      continue;
    }
    if (!in_profile) continue;
    const size_t equals = line.find('=');
    if (equals == absl::string_view::npos) continue;
    const absl::string_view key =
        absl::StripAsciiWhitespace(line.substr(0, equals));
    const std::string value(
        absl::StripAsciiWhitespace(line.substr(equals + 1)));
    if (key == "aws_access_key_id") credentials.access_key_id = value;
    if (key == "aws_secret_access_key") credentials.secret_access_key = value;
    if (key == "aws_session_token") credentials.session_token = value;
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat("no [", profile, "] section"));
  }
  if (credentials.access_key_id.empty() ||
      credentials.secret_access_key.empty()) {
    return absl::NotFoundError(
        "aws_access_key_id or aws_secret_access_key is missing");
  }
  return credentials;
}

absl::StatusOr<S3ClientOptions> ResolveS3Client(const S3Settings& settings,
                                                const Getenv& getenv) {
  S3ClientOptions options;
  options.bucket = settings.bucket;
  options.region = settings.region;
  if (options.region.empty()) {
    options.region = FirstSet(getenv, "AWS_REGION", "AWS_DEFAULT_REGION");
  }
  if (options.region.empty()) options.region = "us-east-1";
  const bool aws = settings.endpoint.empty();
  options.endpoint =
      aws ? absl::StrCat("https://s3.", options.region, ".amazonaws.com")
          : settings.endpoint;
  if (!absl::StartsWith(options.endpoint, "https://") &&
      !absl::StartsWith(options.endpoint, "http://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--s3_endpoint=", settings.endpoint,
        " must be https://HOST[:PORT] (or http:// for a test endpoint)"));
  }
  if (settings.addressing == "auto") {
    options.path_style = !aws;
  } else if (settings.addressing == "path" ||
             settings.addressing == "virtual") {
    options.path_style = settings.addressing == "path";
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--s3_addressing must be auto, path or virtual, not '",
                     settings.addressing, "'"));
  }
  options.ca_file = settings.ca_file;
  ASSIGN_OR_RETURN(options.credentials, FromEnvironmentOrFile(getenv));
  return options;
}

}  // namespace verity::server
