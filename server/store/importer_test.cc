// Tests ImportDirectory on a generated tree with nested folders, symlinks
// in and out of it, a dangling symlink, a FIFO and a symlink loop.

#include "server/store/importer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/file_digest.h"
#include "server/store/file/testing/file_store.h"

namespace verity::server {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

class ImporterTest : public FileStoreFixture {
 protected:
  void SetUp() override {
    FileStoreFixture::SetUp();
    dir_ = FreshTestDir("_import");
  }

  void Write(const std::string& relative, absl::string_view data) {
    const std::string path = dir_ + "/" + relative;
    ASSERT_TRUE(MakeDirs(path.substr(0, path.rfind('/'))).ok());
    ASSERT_TRUE(WriteWholeFile(path, data).ok());
  }

  void Link(const std::string& target, const std::string& relative) {
    ASSERT_EQ(symlink(target.c_str(), (dir_ + "/" + relative).c_str()), 0);
  }

  // The digest text `fsverity digest` would print for `relative`.
  std::string DigestOfFile(const std::string& relative) {
    const absl::StatusOr<MerkleTree> tree =
        BuildMerkleTreeFromFile(dir_ + "/" + relative, MerkleParams{}, 1);
    EXPECT_TRUE(tree.ok()) << tree.status();
    return tree.ok()
               ? FormatDigest(HashAlgorithm::kSha256, AsBytes(tree->digest))
               : "";
  }

  std::string Resolved(absl::string_view name) {
    const absl::StatusOr<ParsedDigest> digest = store_->ResolveName(name);
    if (!digest.ok()) return std::string(digest.status().message());
    return digest->ToString();
  }

  std::string dir_;
};

TEST_F(ImporterTest, ImportsRegularFilesAndInsideSymlinks) {
  Write("top.txt", "top");
  Write("a/b/deep.bin", MakeData(70000, 1));
  Write("a/empty", "");
  Write("a/same-as-top", "top");
  Link("b/deep.bin", "a/inside-link");
  Link("../outside", "escape");
  Link("/etc/hostname", "absolute-escape");
  Link("nowhere", "dangling");
  Link("loop", "loop");
  Link("a", "dir-link");  // a directory: neither followed nor walked
  ASSERT_EQ(mkfifo((dir_ + "/a/fifo").c_str(), 0644), 0);
  const std::string outside = FreshTestDir("_outside");
  ASSERT_TRUE(WriteWholeFile(outside + "/secret", "secret").ok());
  Link(outside + "/secret", "a/b/escape-absolute");

  const absl::StatusOr<ImportStats> stats =
      ImportDirectory(store_.get(), dir_, MerkleParams{});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->files, 5u);
  EXPECT_EQ(stats->bytes, 3u + 70000 + 0 + 3 + 70000);
  EXPECT_EQ(stats->already_present, 2u);
  EXPECT_EQ(stats->refused, 6u);
  EXPECT_EQ(stats->skipped, 1u);
  EXPECT_EQ(store_->blob_count(), 3u);

  EXPECT_EQ(Resolved("top.txt"), DigestOfFile("top.txt"));
  EXPECT_EQ(Resolved("a/b/deep.bin"), DigestOfFile("a/b/deep.bin"));
  EXPECT_EQ(Resolved("a/empty"), DigestOfFile("a/empty"));
  EXPECT_EQ(Resolved("a/inside-link"), DigestOfFile("a/b/deep.bin"));
  EXPECT_EQ(Resolved("a/same-as-top"), DigestOfFile("top.txt"));
  for (const char* refused :
       {"escape", "absolute-escape", "dangling", "loop", "dir-link", "a/fifo",
        "a/b/escape-absolute", "dir-link/empty"}) {
    EXPECT_EQ(store_->ResolveName(refused).status().code(),
              absl::StatusCode::kNotFound)
        << refused;
  }
  EXPECT_TRUE(log_.Contains("refusing escape:"));
  EXPECT_TRUE(log_.Contains("refusing dangling:"));
  EXPECT_TRUE(log_.Contains("skipping a/fifo:"));
  EXPECT_THAT(store_->Stat(DigestFromText(DigestOfFile("top.txt")))->names,
              ElementsAre("a/same-as-top", "top.txt"));
}

TEST_F(ImporterTest, ReimportFindsEverythingPresent) {
  Write("x/y", "y");
  Write("z", "z");
  ASSERT_TRUE(ImportDirectory(store_.get(), dir_, MerkleParams{}).ok());
  const absl::StatusOr<ImportStats> again =
      ImportDirectory(store_.get(), dir_ + "/", MerkleParams{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->files, 2u);
  EXPECT_EQ(again->already_present, 2u);
  EXPECT_EQ(store_->blob_count(), 2u);
  EXPECT_THAT(EntriesOf(root_ + "/names"), ::testing::SizeIs(2));
}

TEST_F(ImporterTest, KubernetesConfigMapMountImportsOnlyItsKeys) {
  // What the kubelet's atomic writer makes of a ConfigMap with keys a and b.
  Write("..2026_11_30_07_00_00.123/a", "alpha");
  Write("..2026_11_30_07_00_00.123/b", "beta");
  Link("..2026_11_30_07_00_00.123", "..data");
  Link("..data/a", "a");
  Link("..data/b", "b");
  const absl::StatusOr<ImportStats> stats =
      ImportDirectory(store_.get(), dir_, MerkleParams{});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->files, 2u);
  EXPECT_EQ(stats->refused, 0u);
  EXPECT_THAT(EntriesOf(root_ + "/names"), ::testing::SizeIs(2));
  EXPECT_EQ(Resolved("a"), DigestOfFile("a"));
  EXPECT_EQ(Resolved("b"), DigestOfFile("b"));
}

TEST_F(ImporterTest, UsesTheGivenParams) {
  Write("f", MakeData(5000, 2));
  MerkleParams params;
  params.hash_algorithm = HashAlgorithm::kSha512;
  params.block_size = 1024;
  ASSERT_TRUE(ImportDirectory(store_.get(), dir_, params).ok());
  const absl::StatusOr<ParsedDigest> digest = store_->ResolveName("f");
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(digest->algorithm, HashAlgorithm::kSha512);
  EXPECT_EQ(store_->Stat(*digest)->descriptor.log_block_size, 10);

  params.block_size = 512;  // below the store's minimum
  EXPECT_EQ(ImportDirectory(store_.get(), dir_, params).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ImporterTest, MissingDirectoryIsNotFound) {
  EXPECT_EQ(ImportDirectory(store_.get(), dir_ + "/nope", MerkleParams{})
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ImporterTest, FileIsNotADirectory) {
  Write("file", "x");
  EXPECT_EQ(ImportDirectory(store_.get(), dir_ + "/file", MerkleParams{})
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(ImporterTest, EmptyDirectoryImportsNothing) {
  const absl::StatusOr<ImportStats> stats =
      ImportDirectory(store_.get(), dir_, MerkleParams{});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->files, 0u);
  EXPECT_EQ(store_->blob_count(), 0u);
}

}  // namespace
}  // namespace verity::server
