// `verity rm` against the in-process fake server: a name goes alone, a
// digest takes the blob.

#include "client/cli/rm_command.h"

#include <string>

#include "client/cli/exit_codes.h"
#include "client/testing/fake_verity_service.h"
#include "client/testing/read_stream_fixture.h"
#include "client/testing/test_argv.h"
#include "gtest/gtest.h"

namespace verity::cli {
namespace {

using ::verity::client::FakeVerityServer;

class RmCommandTest : public ::testing::Test {
 protected:
  RmCommandTest()
      : blob_(MakeRandomTestBlob(1000,
                                 TestParams(HashAlgorithm::kSha256, 4096))) {
    server_.service().Add(blob_, "name");
  }

  int Rm(const std::string& ref) {
    TestArgv argv({"rm", "--server=" + server_.address(), ref});
    return RunRmCommand(argv.argc(), argv.argv(), out_.get(), err_.get());
  }

  TestBlob blob_;
  FakeVerityServer server_;
  CapturedFile out_;
  CapturedFile err_;
};

TEST_F(RmCommandTest, ByNameKeepsTheBlob) {
  EXPECT_EQ(Rm("name"), kExitOk) << err_.contents();
  EXPECT_EQ(Rm("name"), kExitNotFound);
  EXPECT_EQ(server_.service().Content(blob_.digest_text), blob_.data);
  EXPECT_EQ(out_.contents(), "");
}

TEST_F(RmCommandTest, ByDigestRemovesTheBlob) {
  EXPECT_EQ(Rm(blob_.digest_text), kExitOk) << err_.contents();
  EXPECT_EQ(server_.service().Content(blob_.digest_text), "");
  EXPECT_EQ(Rm(blob_.digest_text), kExitNotFound);
  EXPECT_EQ(Rm("name"), kExitNotFound);
}

TEST_F(RmCommandTest, UsageErrors) {
  TestArgv none({"rm"});
  EXPECT_EQ(RunRmCommand(none.argc(), none.argv(), out_.get(), err_.get()),
            kExitUsage);
  TestArgv two({"rm", "a", "b"});
  EXPECT_EQ(RunRmCommand(two.argc(), two.argv(), out_.get(), err_.get()),
            kExitUsage);
}

}  // namespace
}  // namespace verity::cli
