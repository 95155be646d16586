// `verity get` end to end against the in-process fake server: stdout and -o
// receive only verified content, and a failed get leaves no output file.

#include "client/cli/get_command.h"

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "client/cli/exit_codes.h"
#include "client/testing/fake_verity_service.h"
#include "client/testing/read_stream_fixture.h"
#include "client/testing/test_argv.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"

namespace verity::cli {
namespace {

using ::verity::client::FakeVerityServer;
using ::verity::client::HonestReadStream;
using ::verity::v1::ReadResponse;

TEST(ParseGetOptionsTest, Flags) {
  TestArgv argv({"get", "-o", "out", "sha256:" + std::string(64, 'a'),
                 "--offset=10", "--length=20", "--priority=rt", "--parallel=4",
                 "--server=s:1"});
  absl::StatusOr<GetOptions> opts = ParseGetOptions(argv.argc(), argv.argv());
  ASSERT_TRUE(opts.ok()) << opts.status();
  EXPECT_TRUE(opts->blob.digest.has_value());
  EXPECT_EQ(opts->output, "out");
  EXPECT_EQ(opts->fetch.offset, 10u);
  EXPECT_EQ(opts->fetch.length, 20u);
  EXPECT_EQ(opts->fetch.priority, sdk::PriorityClass::kRealtime);
  EXPECT_EQ(opts->fetch.parallel_streams, 4);
  EXPECT_EQ(opts->connection.server, "s:1");

  TestArgv by_name({"get", "photos/cat.jpg"});
  opts = ParseGetOptions(by_name.argc(), by_name.argv());
  ASSERT_TRUE(opts.ok());
  EXPECT_EQ(opts->blob.name, "photos/cat.jpg");
  EXPECT_FALSE(opts->fetch.priority.has_value());
  EXPECT_FALSE(opts->fetch.length.has_value());
  EXPECT_EQ(opts->fetch.parallel_streams, 1);
}

TEST(ParseGetOptionsTest, Errors) {
  for (std::vector<std::string> args : {std::vector<std::string>{"get"},
                                        {"get", "a", "b"},
                                        {"get", "a", "--priority=high"},
                                        {"get", "a", "--offset=-1"},
                                        {"get", "a", "--parallel=0"},
                                        {"get", "a", "--parallel=65"},
                                        {"get", "a", "-o"},
                                        {"get", "a", "-o", ""}}) {
    TestArgv argv(args);
    EXPECT_EQ(ParseGetOptions(argv.argc(), argv.argv()).status().code(),
              absl::StatusCode::kInvalidArgument)
        << args.back();
  }
}

class GetCommandTest : public ::testing::Test {
 protected:
  GetCommandTest()
      : blob_(MakeRandomTestBlob(70000,
                                 TestParams(HashAlgorithm::kSha256, 4096))) {
    server_.service().Add(blob_, "the/blob");
    dir_ = ::testing::TempDir() + "/get_command_test_XXXXXX";
    EXPECT_NE(mkdtemp(&dir_[0]), nullptr);
  }

  int Get(std::vector<std::string> args) {
    args.insert(args.begin(), {"get", "--server=" + server_.address()});
    TestArgv argv(std::move(args));
    return RunGetCommand(argv.argc(), argv.argv(), out_.get(), err_.get());
  }

  void CorruptEveryRead() {
    server_.service().SetTamper([](std::vector<ReadResponse>* stream) {
      (*stream->back().mutable_data())[0] ^= 1;
    });
  }

  std::vector<std::string> Files() const {
    absl::StatusOr<std::vector<std::string>> names = ListDir(dir_);
    EXPECT_TRUE(names.ok()) << names.status();
    return names.ok() ? *std::move(names) : std::vector<std::string>();
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream contents;
    contents << in.rdbuf();
    return contents.str();
  }

  TestBlob blob_;
  FakeVerityServer server_;
  std::string dir_;
  CapturedFile out_;
  CapturedFile err_;
};

TEST_F(GetCommandTest, ToStdout) {
  EXPECT_EQ(Get({blob_.digest_text}), kExitOk) << err_.contents();
  EXPECT_EQ(out_.contents(), blob_.data);
}

TEST_F(GetCommandTest, RangeByNameToStdout) {
  EXPECT_EQ(Get({"the/blob", "--offset=4097", "--length=9000"}), kExitOk);
  EXPECT_EQ(out_.contents(), blob_.data.substr(4097, 9000));
}

TEST_F(GetCommandTest, ToFile) {
  const std::string path = dir_ + "/out";
  EXPECT_EQ(Get({blob_.digest_text, "-o", path}), kExitOk) << err_.contents();
  EXPECT_EQ(ReadFile(path), blob_.data);
  EXPECT_EQ(Files(), std::vector<std::string>{"out"});
  EXPECT_EQ(out_.contents(), "");
}

TEST_F(GetCommandTest, ParallelToFileAndStdout) {
  const std::string path = dir_ + "/out";
  EXPECT_EQ(Get({blob_.digest_text, "-o", path, "--parallel=3"}), kExitOk)
      << err_.contents();
  EXPECT_EQ(ReadFile(path), blob_.data);
  EXPECT_EQ(Files(), std::vector<std::string>{"out"});
  EXPECT_EQ(Get({"the/blob", "--parallel=5", "--offset=100", "--length=60000"}),
            kExitOk)
      << err_.contents();
  EXPECT_EQ(out_.contents(), blob_.data.substr(100, 60000));
}

TEST_F(GetCommandTest, ZeroLengthIsEmpty) {
  EXPECT_EQ(Get({blob_.digest_text, "--offset=5", "--length=0"}), kExitOk)
      << err_.contents();
  EXPECT_EQ(out_.contents(), "");
}

TEST_F(GetCommandTest, VerificationFailureLeavesNoFile) {
  CorruptEveryRead();
  EXPECT_EQ(Get({blob_.digest_text, "-o", dir_ + "/out"}),
            kExitVerificationFailed);
  EXPECT_TRUE(Files().empty());
  EXPECT_NE(err_.contents().find(blob_.digest_text), std::string::npos);
}

TEST_F(GetCommandTest, VerificationFailureKeepsTheOldFile) {
  const std::string path = dir_ + "/out";
  std::ofstream(path) << "old content";
  CorruptEveryRead();
  EXPECT_EQ(Get({"the/blob", "-o", path}), kExitVerificationFailed);
  EXPECT_EQ(ReadFile(path), "old content");
  EXPECT_EQ(Files(), std::vector<std::string>{"out"});
}

TEST_F(GetCommandTest, StdoutGetsOnlyTheVerifiedPrefix) {
  CorruptEveryRead();
  EXPECT_EQ(Get({blob_.digest_text}), kExitVerificationFailed);
  const std::string got = out_.contents();
  EXPECT_LT(got.size(), blob_.data.size());
  EXPECT_EQ(got, blob_.data.substr(0, got.size()));
}

TEST_F(GetCommandTest, AnotherBlobUnderTheDigestIsRejected) {
  const TestBlob other =
      MakeRandomTestBlob(70000, TestParams(HashAlgorithm::kSha256, 4096), 9);
  // By value: the server keeps the tamper, and runs it on its own threads,
  // after this body ends.
  server_.service().SetTamper([other](std::vector<ReadResponse>* stream) {
    *stream = HonestReadStream(other, 0, std::nullopt);
  });
  EXPECT_EQ(Get({blob_.digest_text, "-o", dir_ + "/out"}),
            kExitVerificationFailed);
  EXPECT_TRUE(Files().empty());
  EXPECT_EQ(out_.contents(), "");
}

TEST_F(GetCommandTest, MissingBlobIsNotFound) {
  EXPECT_EQ(Get({"no/such/blob", "-o", dir_ + "/out"}), kExitNotFound);
  EXPECT_EQ(Get({"sha512:" + std::string(128, '0')}), kExitNotFound);
  EXPECT_TRUE(Files().empty());
}

TEST_F(GetCommandTest, UnreachableServerIsUnavailable) {
  TestArgv argv({"get", "--server=127.0.0.1:1", blob_.digest_text});
  EXPECT_EQ(RunGetCommand(argv.argc(), argv.argv(), out_.get(), err_.get()),
            kExitUnavailable);
}

TEST_F(GetCommandTest, UsageErrors) {
  EXPECT_EQ(Get({}), kExitUsage);
  EXPECT_NE(err_.contents().find("Usage: verity get"), std::string::npos);
  EXPECT_EQ(Get({"a", "--offset=x"}), kExitUsage);
}

}  // namespace
}  // namespace verity::cli
