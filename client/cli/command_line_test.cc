// The shared parser: connection flags with their defaults and environment,
// a command's own flags in long and short form, operands, and errors.

#include "client/cli/command_line.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "client/testing/test_argv.h"
#include "gtest/gtest.h"

namespace verity::cli {
namespace {

using ::absl::StatusCode;

class CommandLineTest : public ::testing::Test {
 protected:
  void SetUp() override { TearDown(); }
  void TearDown() override {
    unsetenv("VERITY_SERVER");
    unsetenv("VERITY_TOKEN");
  }

  // Parses with one value flag (-o/--output) and one switch (--all).
  absl::StatusOr<CommandLine> Parse(std::vector<std::string> args) {
    output_.clear();
    all_ = false;
    const std::vector<CommandFlag> flags = {
        {"output", 'o', true,
         [this](absl::string_view v) {
           output_ = std::string(v);
           return absl::OkStatus();
         }},
        {"all", 0, false,
         [this](absl::string_view) {
           all_ = true;
           return absl::OkStatus();
         }},
    };
    args.insert(args.begin(), "cmd");
    TestArgv argv(std::move(args));
    return ParseCommandLine(argv.argc(), argv.argv(), flags);
  }

  std::string output_;
  bool all_ = false;
};

TEST_F(CommandLineTest, Defaults) {
  absl::StatusOr<CommandLine> line = Parse({"x"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->connection.server, "127.0.0.1:50051");
  EXPECT_TRUE(line->connection.tls_ca_file.empty());
  EXPECT_EQ(line->connection.timeout, absl::Seconds(60));
  EXPECT_EQ(line->operands, std::vector<std::string>{"x"});
}

TEST_F(CommandLineTest, EnvironmentThenFlag) {
  setenv("VERITY_SERVER", "env:1", 1);
  EXPECT_EQ(Parse({})->connection.server, "env:1");
  EXPECT_EQ(Parse({"--server=flag:2"})->connection.server, "flag:2");
  setenv("VERITY_SERVER", "", 1);
  EXPECT_EQ(Parse({})->connection.server, "127.0.0.1:50051");
}

TEST_F(CommandLineTest, TokenFromTheEnvironmentThenAFile) {
  EXPECT_EQ(Parse({})->connection.token, "");
  setenv("VERITY_TOKEN", "env-token-0123456789\n", 1);
  EXPECT_EQ(Parse({})->connection.token, "env-token-0123456789");
  const std::string file = ::testing::TempDir() + "/command_line_test_token";
  std::ofstream(file) << "  file-token-0123456789\n\n";
  EXPECT_EQ(Parse({"--token-file", file})->connection.token,
            "file-token-0123456789");
  std::ofstream(file, std::ios::trunc) << "\n";
  EXPECT_EQ(Parse({"--token-file=" + file}).status().code(),
            StatusCode::kInvalidArgument);
  // Found by the flags fuzzer: a parse error is INVALID_ARGUMENT, whatever
  // made the value unusable (also through getopt's abbreviation --to=).
  EXPECT_EQ(Parse({"--token-file=/nonexistent/token"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Parse({"--to=/nonexistent/token"}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(CommandLineTest, AllFlagsInAnyOrder) {
  absl::StatusOr<CommandLine> line =
      Parse({"a", "--tls-ca=ca.pem", "-o", "out", "--tls-cert", "c.pem", "b",
             "--tls-key=k.pem", "--timeout=2.5", "--all", "--server=h:1"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->connection.server, "h:1");
  EXPECT_EQ(line->connection.tls_ca_file, "ca.pem");
  EXPECT_EQ(line->connection.tls_cert_file, "c.pem");
  EXPECT_EQ(line->connection.tls_key_file, "k.pem");
  EXPECT_EQ(line->connection.timeout, absl::Milliseconds(2500));
  EXPECT_EQ(output_, "out");
  EXPECT_TRUE(all_);
  EXPECT_EQ(line->operands, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Parse({"--output=x"}).ok(), true);
  EXPECT_EQ(output_, "x");
  EXPECT_EQ(Parse({"-ox"}).ok(), true);
  EXPECT_EQ(output_, "x");
}

TEST_F(CommandLineTest, DoubleDashEndsOptions) {
  absl::StatusOr<CommandLine> line = Parse({"--", "--all", "-o"});
  ASSERT_TRUE(line.ok());
  EXPECT_FALSE(all_);
  EXPECT_EQ(line->operands, (std::vector<std::string>{"--all", "-o"}));
}

TEST_F(CommandLineTest, Errors) {
  const std::vector<std::vector<std::string>> bad = {
      {"--nope"},
      {"-x"},
      {"-o"},
      {"--output"},
      {"--server"},
      {"--all=1"},
      {"--all", "--all"},
      {"--server=a", "--server=b"},
      {"--timeout=soon"},
      {"--timeout=-1"},
      {"--tls-cert=c.pem", "--tls-key=k.pem"},  // no --tls-ca
      {"--tls-ca=ca.pem", "--tls-cert=c.pem"},  // no --tls-key
      {"--tls-ca=ca.pem", "--tls-key=k.pem"},   // no --tls-cert
      {"--server="},
  };
  for (const auto& args : bad) {
    absl::StatusOr<CommandLine> line = Parse(args);
    EXPECT_EQ(line.status().code(), StatusCode::kInvalidArgument)
        << args[0] << " " << line.status();
  }
  EXPECT_NE(Parse({"--nope"}).status().message().find("--nope"),
            absl::string_view::npos);
}

TEST_F(CommandLineTest, OneBlobOperand) {
  absl::StatusOr<client::BlobRef> blob = OneBlobOperand(Parse({"dir/name"}));
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(blob->name, "dir/name");
  blob = OneBlobOperand(Parse({"sha256:" + std::string(64, '0')}));
  ASSERT_TRUE(blob.ok());
  EXPECT_TRUE(blob->digest.has_value());
  EXPECT_EQ(OneBlobOperand(Parse({})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(OneBlobOperand(Parse({"a", "b"})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(OneBlobOperand(Parse({"--nope", "a"})).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(CommandLineTest, ReportingPicksTheExitCode) {
  CapturedFile err;
  EXPECT_EQ(ReportStatus("get", absl::OkStatus(), err.get()), 0);
  EXPECT_EQ(err.contents(), "");
  EXPECT_EQ(ReportStatus("get", absl::DataLossError("bad block"), err.get()),
            3);
  EXPECT_EQ(err.contents(), "verity get: bad block\n");
  CapturedFile usage;
  EXPECT_EQ(UsageError("rm", absl::InvalidArgumentError("what?"),
                       "Usage: verity rm X\n", usage.get()),
            1);
  EXPECT_EQ(usage.contents().rfind("verity rm: what?\nUsage: verity rm X\n"
                                   "Connection:",
                                   0),
            0u);
}

}  // namespace
TEST(StringFlagTest, StoresAValueAndRefusesNone) {
  std::string file;
  const CommandFlag flag = StringFlag("log-key", &file);
  EXPECT_STREQ(flag.name, "log-key");
  EXPECT_TRUE(flag.takes_value);
  ASSERT_TRUE(flag.apply("log.vkey").ok());
  EXPECT_EQ(file, "log.vkey");
  const absl::Status empty = flag.apply("");
  EXPECT_TRUE(absl::IsInvalidArgument(empty));
  EXPECT_EQ(empty.message(), "--log-key is empty");
  EXPECT_EQ(file, "log.vkey");
}

}  // namespace verity::cli
