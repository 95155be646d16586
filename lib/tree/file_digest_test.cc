// Tests building trees from files: agreement with `fsverity digest` and the
// builders, and clear errors for bad paths.

#include "lib/tree/file_digest.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_builder.h"

namespace verity {
namespace {

std::string MakeData(size_t size) {
  std::string data(size, '\0');
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>(i * i + 7);
  return data;
}

TEST(FileDigestTest, MatchesFsverityDigest) {
  MerkleParams params;
  params.hash_algorithm = HashAlgorithm::kSha512;
  params.block_size = 1024;
  params.salt = "pepper";
  const absl::StatusOr<std::string> path =
      WriteTestFile("file_digest_test_data", MakeData(3 << 20));
  ASSERT_TRUE(path.ok()) << path.status();
  const absl::StatusOr<FsverityOutput> expected =
      RunFsverityDigest(*path, params);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int threads : {1, 2, 5}) {
    const absl::StatusOr<MerkleTree> tree =
        BuildMerkleTreeFromFile(*path, params, threads);
    ASSERT_TRUE(tree.ok()) << tree.status();
    EXPECT_EQ(
        absl::StrCat(FormatDigest(params.hash_algorithm, AsBytes(tree->digest)),
                     " ", *path),
        expected->line);
    EXPECT_TRUE(tree->tree == expected->tree) << threads;
  }
  unlink(path->c_str());
}

TEST(FileDigestTest, FdVersionLeavesOffsetAlone) {
  const std::string data = MakeData(10000);
  const absl::StatusOr<std::string> path =
      WriteTestFile("file_digest_test_fd", data);
  ASSERT_TRUE(path.ok()) << path.status();
  const int fd = open(path->c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(lseek(fd, 123, SEEK_SET), 123);
  const absl::StatusOr<MerkleTree> tree =
      BuildMerkleTreeFromFd(fd, MerkleParams{}, 2);
  EXPECT_EQ(lseek(fd, 0, SEEK_CUR), 123);
  close(fd);
  unlink(path->c_str());
  ASSERT_TRUE(tree.ok()) << tree.status();

  MerkleBuilder builder(MerkleParams{});
  ASSERT_TRUE(builder.Update(AsBytes(data)).ok());
  const absl::StatusOr<MerkleTree> streamed = builder.Finish();
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ(tree->digest, streamed->digest);
  EXPECT_EQ(tree->tree, streamed->tree);
}

TEST(FileDigestTest, MissingFileIsNotFound) {
  const absl::StatusOr<MerkleTree> tree = BuildMerkleTreeFromFile(
      TestTempDir() + "/no/such/file", MerkleParams{}, 1);
  EXPECT_EQ(tree.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(tree.status().message().find("no/such/file"),
            absl::string_view::npos);
}

TEST(FileDigestTest, DirectoryIsRejected) {
  EXPECT_EQ(
      BuildMerkleTreeFromFile(TestTempDir(), MerkleParams{}, 1).status().code(),
      absl::StatusCode::kFailedPrecondition);
}

TEST(FileDigestTest, BadFdFails) {
  EXPECT_FALSE(BuildMerkleTreeFromFd(-1, MerkleParams{}, 1).ok());
}

TEST(FileDigestTest, InvalidParamsAreInvalidArgument) {
  const absl::StatusOr<std::string> path =
      WriteTestFile("file_digest_test_params", "abc");
  ASSERT_TRUE(path.ok()) << path.status();
  MerkleParams params;
  params.salt = std::string(40, 'x');
  EXPECT_EQ(BuildMerkleTreeFromFile(*path, params, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  unlink(path->c_str());
}

}  // namespace
}  // namespace verity
