// `verity put` against the in-process fake server: output lines match
// `fsverity digest`, parameters and names reach the server, and the server
// must agree on the digest.

#include "client/cli/put_command.h"

#include <fstream>
#include <string>
#include <vector>

#include "client/cli/exit_codes.h"
#include "client/testing/fake_verity_service.h"
#include "client/testing/read_stream_fixture.h"
#include "client/testing/test_argv.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/tree/file_digest.h"

namespace verity::cli {
namespace {

using ::verity::client::FakeVerityServer;

TEST(ParsePutOptionsTest, Flags) {
  TestArgv argv({"put", "f", "--hash-alg=sha512", "--block-size=1024",
                 "--salt=abcd", "--name=a/b", "--timeout=0"});
  absl::StatusOr<PutOptions> opts = ParsePutOptions(argv.argc(), argv.argv());
  ASSERT_TRUE(opts.ok()) << opts.status();
  EXPECT_EQ(opts->params.hash_algorithm, HashAlgorithm::kSha512);
  EXPECT_EQ(opts->params.block_size, 1024u);
  EXPECT_EQ(opts->params.salt, "\xab\xcd");
  EXPECT_EQ(opts->name, "a/b");
  EXPECT_EQ(opts->files, std::vector<std::string>{"f"});
  EXPECT_EQ(opts->connection.timeout, absl::ZeroDuration());
}

TEST(ParsePutOptionsTest, DmVerity) {
  TestArgv argv(
      {"put", "f", "--format=dm-verity",
       "--salt=" + std::string(512, 'a')});  // 256 bytes: dm-verity's limit
  absl::StatusOr<PutOptions> opts = ParsePutOptions(argv.argc(), argv.argv());
  ASSERT_TRUE(opts.ok()) << opts.status();
  EXPECT_EQ(opts->params.format, TreeFormat::kDmVerity);
  TestArgv import({"put", "image", "--root-hash=ab", "--hash-device=h"});
  opts = ParsePutOptions(import.argc(), import.argv());
  ASSERT_TRUE(opts.ok()) << opts.status();
  EXPECT_EQ(opts->params.format, TreeFormat::kDmVerity);
  EXPECT_EQ(opts->dm_verity.hash_device, "h");
}

TEST(ParsePutOptionsTest, Errors) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"put"},
        {"put", "a", "b", "--name=n"},
        {"put", "a", "--name="},
        {"put", "a", "--hash-alg=md5"},
        {"put", "a", "--block-size=3000"},
        {"put", "a", "--block-size=32"},
        {"put", "a", "--salt=xyz"},
        {"put", "a", "--salt=" + std::string(66, 'a')},
        {"put", "a", "--format=ext4"},
        {"put", "a", "b", "--root-hash=00", "--verity-params=data-blocks=1"},
        {"put", "a", "--root-hash=00", "--block-size=1024",
         "--hash-device=h"}}) {
    TestArgv argv(args);
    EXPECT_EQ(ParsePutOptions(argv.argc(), argv.argv()).status().code(),
              absl::StatusCode::kInvalidArgument)
        << args.back();
  }
}

class PutCommandTest : public ::testing::Test {
 protected:
  PutCommandTest() {
    for (int i = 0; i < 2; ++i) {
      files_.push_back(::testing::TempDir() + "/put_" + std::to_string(i));
      std::ofstream(files_.back(), std::ios::binary)
          << std::string(3000000 + i, static_cast<char>('a' + i));
    }
  }

  int Put(std::vector<std::string> args) {
    args.insert(args.begin(), {"put", "--server=" + server_.address()});
    TestArgv argv(std::move(args));
    return RunPutCommand(argv.argc(), argv.argv(), out_.get(), err_.get());
  }

  // The line `fsverity digest` prints for `file`.
  static std::string ExpectedLine(const std::string& file,
                                  const MerkleParams& params) {
    absl::StatusOr<MerkleTree> tree = BuildMerkleTreeFromFile(file, params, 1);
    return FormatDigest(params.hash_algorithm, AsBytes(tree->digest)) + " " +
           file + "\n";
  }

  FakeVerityServer server_;
  std::vector<std::string> files_;
  CapturedFile out_;
  CapturedFile err_;
};

TEST_F(PutCommandTest, PrintsDigestsLikeFsverity) {
  EXPECT_EQ(Put({files_[0], files_[1]}), kExitOk) << err_.contents();
  const MerkleParams defaults;
  EXPECT_EQ(out_.contents(), ExpectedLine(files_[0], defaults) +
                                 ExpectedLine(files_[1], defaults));
  absl::StatusOr<MerkleTree> tree =
      BuildMerkleTreeFromFile(files_[1], defaults, 1);
  EXPECT_EQ(server_.service().Content(
                FormatDigest(HashAlgorithm::kSha256, AsBytes(tree->digest))),
            std::string(3000001, 'b'));
}

TEST_F(PutCommandTest, ParametersAndName) {
  EXPECT_EQ(Put({files_[0], "--hash-alg=sha512", "--block-size=1024",
                 "--salt=00ff", "--name=dir/file"}),
            kExitOk)
      << err_.contents();
  const MerkleParams params =
      TestParams(HashAlgorithm::kSha512, 1024, std::string("\x00\xff", 2));
  EXPECT_EQ(out_.contents(), ExpectedLine(files_[0], params));
}

TEST_F(PutCommandTest, Errors) {
  EXPECT_EQ(Put({::testing::TempDir() + "/no-such-file"}), kExitNotFound);
  EXPECT_EQ(Put({::testing::TempDir()}), kExitOtherError);  // a directory
  TestArgv argv({"put", "--server=127.0.0.1:1", files_[0]});
  EXPECT_EQ(RunPutCommand(argv.argc(), argv.argv(), out_.get(), err_.get()),
            kExitUnavailable);
  EXPECT_EQ(out_.contents(), "");
}

}  // namespace
}  // namespace verity::cli
