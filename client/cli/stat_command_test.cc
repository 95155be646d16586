// `verity stat` against the in-process fake server.

#include "client/cli/stat_command.h"

#include <string>
#include <vector>

#include "client/cli/exit_codes.h"
#include "client/testing/fake_verity_service.h"
#include "client/testing/read_stream_fixture.h"
#include "client/testing/test_argv.h"
#include "gtest/gtest.h"

namespace verity::cli {
namespace {

using ::verity::client::FakeVerityServer;

class StatCommandTest : public ::testing::Test {
 protected:
  StatCommandTest()
      : blob_(MakeRandomTestBlob(
            50000, TestParams(HashAlgorithm::kSha512, 1024, "\x01\xfe"))) {
    server_.service().Add(blob_, "a/b");
    server_.service().Add(blob_, "c");
  }

  int Stat(const std::string& ref) {
    TestArgv argv({"stat", "--server=" + server_.address(), ref});
    return RunStatCommand(argv.argc(), argv.argv(), out_.get(), err_.get());
  }

  TestBlob blob_;
  FakeVerityServer server_;
  CapturedFile out_;
  CapturedFile err_;
};

TEST_F(StatCommandTest, ByDigestAndByName) {
  const std::string expected = "digest: " + blob_.digest_text +
                               "\n"
                               "size: 50000\n"
                               "hash-algorithm: sha512\n"
                               "block-size: 1024\n"
                               "salt: 01fe\n"
                               "tree-size: " +
                               std::to_string(blob_.tree.tree.size()) +
                               "\n"
                               "name: a/b\n"
                               "name: c\n";
  EXPECT_EQ(Stat(blob_.digest_text), kExitOk) << err_.contents();
  EXPECT_EQ(out_.contents(), expected);
  EXPECT_EQ(Stat("c"), kExitOk);
  EXPECT_EQ(out_.contents(), expected + expected);
}

TEST_F(StatCommandTest, Errors) {
  EXPECT_EQ(Stat("nope"), kExitNotFound);
  TestArgv none({"stat"});
  EXPECT_EQ(RunStatCommand(none.argc(), none.argv(), out_.get(), err_.get()),
            kExitUsage);
  EXPECT_EQ(out_.contents(), "");
}

}  // namespace
}  // namespace verity::cli
