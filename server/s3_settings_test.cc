// Where the S3 settings come from: flags, then the AWS environment and the
// credentials file, and the messages when something is missing.

#include "server/s3_settings.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "lib/base/file_util.h"

namespace verity::server {
namespace {

Getenv Environment(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(S3SettingsTest, AwsDefaultsFromTheEnvironment) {
  S3Settings settings;
  settings.bucket = "b12";
  absl::StatusOr<S3ClientOptions> options = ResolveS3Client(
      settings, Environment({{"AWS_ACCESS_KEY_ID", "AK"},
                             {"AWS_SECRET_ACCESS_KEY", "SK"},
                             {"AWS_SESSION_TOKEN", "ST"},
                             {"AWS_DEFAULT_REGION", "eu-west-3"}}));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->endpoint, "https://s3.eu-west-3.amazonaws.com");
  EXPECT_EQ(options->region, "eu-west-3");
  EXPECT_FALSE(options->path_style);
  EXPECT_EQ(options->credentials.access_key_id, "AK");
  EXPECT_EQ(options->credentials.secret_access_key, "SK");
  EXPECT_EQ(options->credentials.session_token, "ST");
}

TEST(S3SettingsTest, AnEndpointOfOurOwnIsPathStyle) {
  S3Settings settings;
  settings.bucket = "b12";
  settings.endpoint = "http://127.0.0.1:7480";
  settings.region = "default";
  const Getenv env = Environment({{"AWS_ACCESS_KEY_ID", "AK"},
                                  {"AWS_SECRET_ACCESS_KEY", "SK"},
                                  {"AWS_REGION", "ignored"}});
  absl::StatusOr<S3ClientOptions> options = ResolveS3Client(settings, env);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->endpoint, "http://127.0.0.1:7480");
  EXPECT_EQ(options->region, "default");
  EXPECT_TRUE(options->path_style);
  settings.addressing = "virtual";
  EXPECT_FALSE(ResolveS3Client(settings, env)->path_style);
  settings.addressing = "sideways";
  EXPECT_EQ(ResolveS3Client(settings, env).status().code(),
            absl::StatusCode::kInvalidArgument);
  settings.addressing = "auto";
  settings.endpoint = "127.0.0.1:7480";
  absl::StatusOr<S3ClientOptions> bad = ResolveS3Client(settings, env);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--s3_endpoint"), std::string::npos);
}

TEST(S3SettingsTest, CredentialsFileAndProfile) {
  const std::string dir = ::testing::TempDir();
  const std::string file = JoinPath(dir, "credentials");
  ASSERT_TRUE(ReplaceFileDurably(JoinPath(dir, "credentials.tmp"), file,
                                 "# comment\n[default]\n"
                                 "aws_access_key_id = DEF\n"
                                 "aws_secret_access_key=DEFSECRET\n"
                                 "; another\n[ci]\n"
                                 "aws_access_key_id=CI\n"
                                 "aws_secret_access_key = CISECRET\n")
                  .ok());
  S3Settings settings;
  settings.bucket = "b12";
  absl::StatusOr<S3ClientOptions> options = ResolveS3Client(
      settings, Environment({{"AWS_SHARED_CREDENTIALS_FILE", file}}));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->credentials.access_key_id, "DEF");
  options = ResolveS3Client(settings,
                            Environment({{"AWS_SHARED_CREDENTIALS_FILE", file},
                                         {"AWS_PROFILE", "ci"}}));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->credentials.secret_access_key, "CISECRET");
  // ~/.aws/credentials when no file is named.
  ASSERT_TRUE(MakeDirs(JoinPath(dir, "home/.aws")).ok());
  ASSERT_TRUE(Rename(file, JoinPath(dir, "home/.aws/credentials")).ok());
  options =
      ResolveS3Client(settings, Environment({{"HOME", JoinPath(dir, "home")}}));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->credentials.access_key_id, "DEF");
  const absl::StatusOr<S3ClientOptions> missing = ResolveS3Client(
      settings,
      Environment({{"HOME", JoinPath(dir, "home")}, {"AWS_PROFILE", "nope"}}));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
}

TEST(S3SettingsTest, NoCredentialsAnywhere) {
  S3Settings settings;
  settings.bucket = "b12";
  const absl::StatusOr<S3ClientOptions> options = ResolveS3Client(
      settings, Environment({{"HOME", "/nonexistent"},
                             {"AWS_ACCESS_KEY_ID", "only-half"}}));
  EXPECT_EQ(options.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(options.status().message().find("AWS_SECRET_ACCESS_KEY"),
            std::string::npos);
  EXPECT_EQ(options.status().message().find("only-half"), std::string::npos);
}

TEST(S3SettingsTest, ParseCredentialsFile) {
  EXPECT_EQ(
      ParseCredentialsFile("[a]\naws_access_key_id=x\n", "a").status().code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseCredentialsFile("", "a").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ParseCredentialsFile(" [ a ] \n aws_access_key_id = x \n"
                                 "aws_secret_access_key = y\n",
                                 "a")
                ->secret_access_key,
            "y");
}

}  // namespace
}  // namespace verity::server
