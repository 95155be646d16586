// `verity ls` against the in-process fake server, across several pages.

#include "client/cli/ls_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli/exit_codes.h"
#include "client/testing/fake_verity_service.h"
#include "client/testing/read_stream_fixture.h"
#include "client/testing/test_argv.h"
#include "gtest/gtest.h"

namespace verity::cli {
namespace {

using ::verity::client::FakeVerityServer;

TEST(LsCommandTest, ListsEveryBlobOnePerLine) {
  FakeVerityServer server;
  std::vector<std::string> expected;
  server.service().SetMaxPageSize(2);  // three pages
  for (uint32_t i = 0; i < 5; ++i) {
    const TestBlob blob = MakeRandomTestBlob(
        100 * i, TestParams(HashAlgorithm::kSha256, 4096), i + 1);
    server.service().Add(blob, i % 2 ? absl::StrCat("n", i) : "");
    expected.push_back(absl::StrCat(blob.digest_text, " ", 100 * i,
                                    i % 2 ? absl::StrCat(" n", i) : ""));
  }
  std::sort(expected.begin(), expected.end());
  TestArgv argv({"ls", "--server=" + server.address()});
  CapturedFile out, err;
  EXPECT_EQ(RunLsCommand(argv.argc(), argv.argv(), out.get(), err.get()),
            kExitOk)
      << err.contents();
  std::vector<std::string> lines = absl::StrSplit(out.contents(), '\n');
  ASSERT_EQ(lines.back(), "");
  lines.pop_back();
  EXPECT_EQ(lines, expected);
}

TEST(LsCommandTest, Errors) {
  CapturedFile out, err;
  // One operand is a tree to list; two are one too many.
  TestArgv extra({"ls", "x", "y"});
  EXPECT_EQ(RunLsCommand(extra.argc(), extra.argv(), out.get(), err.get()),
            kExitUsage);
  TestArgv down({"ls", "--server=127.0.0.1:1"});
  EXPECT_EQ(RunLsCommand(down.argc(), down.argv(), out.get(), err.get()),
            kExitUnavailable);
}

}  // namespace
}  // namespace verity::cli
