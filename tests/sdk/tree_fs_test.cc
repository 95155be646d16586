// What `verity mount` answers (client/mount/tree_fs.h), without FUSE,
// against a real verityd: a stored tree's inodes, names, modes and links;
// ranges of its files read verified, clipped at their ends; the wrong kind
// of inode refused; a read the server cannot serve fails, is counted and
// logged.

#include "client/mount/tree_fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/sdk/sdk_fixture.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"
#include "verity/tree.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

class TreeFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = TestServer::Start();
    client_ =
        *sdk::Client::Create(FastRetryOptions(server_->verityd().address()));
    const std::string source = NewTempDir() + "/source";
    ASSERT_EQ(mkdir(source.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((source + "/lib").c_str(), 0755), 0);
    big_ = RandomBytes(300000, 1);
    WriteTestFile(source + "/lib/big", big_);
    WriteTestFile(source + "/run", "#!/bin/sh\n", 0755);
    WriteTestFile(source + "/empty", "");
    ASSERT_EQ(symlink("lib/big", (source + "/latest").c_str()), 0);
    absl::StatusOr<sdk::LocalTree> tree =
        sdk::ScanTree(source, sdk::DigestAlgorithm::kSha256, 2);
    ASSERT_TRUE(tree.ok()) << tree.status();
    ASSERT_TRUE(sdk::PutTree(*client_, *tree, {}).ok());
    absl::StatusOr<std::vector<sdk::TreeEntry>> entries =
        sdk::ReadTree(*client_, tree->digest, {});
    ASSERT_TRUE(entries.ok()) << entries.status();
    mount::TreeFsOptions options;
    options.mtime = absl::FromUnixSeconds(1700000000);
    options.uid = 12;
    options.read_timeout = absl::Seconds(3);
    log_ = std::tmpfile();
    options.log = log_;
    absl::StatusOr<std::unique_ptr<mount::TreeFs>> fs =
        mount::TreeFs::Create(*client_, *entries, options);
    ASSERT_TRUE(fs.ok()) << fs.status();
    fs_ = *std::move(fs);
  }

  void TearDown() override {
    if (log_ != nullptr) std::fclose(log_);
  }

  uint64_t InodeOf(uint64_t parent, absl::string_view name) {
    absl::StatusOr<uint64_t> inode = fs_->Lookup(parent, name);
    EXPECT_TRUE(inode.ok()) << name << ": " << inode.status();
    return inode.value_or(0);
  }

  std::string Logged() {
    std::rewind(log_);
    std::string text(4096, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), log_));
    return text;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<sdk::Client> client_;
  std::unique_ptr<mount::TreeFs> fs_;
  std::string big_;
  std::FILE* log_ = nullptr;
};

TEST_F(TreeFsTest, InodesNamesModesAndLinks) {
  constexpr uint64_t kRoot = TreeIndex::kRootInode;
  absl::StatusOr<struct stat> root = fs_->Attr(kRoot);
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->st_mode, S_IFDIR | 0755);
  EXPECT_EQ(root->st_nlink, 3u);  // ".", "..", lib
  EXPECT_EQ(root->st_uid, 12u);
  EXPECT_EQ(root->st_mtim.tv_sec, 1700000000);
  const uint64_t lib = InodeOf(kRoot, "lib");
  const uint64_t big = InodeOf(lib, "big");
  EXPECT_EQ(fs_->Attr(big)->st_mode, S_IFREG | 0644);
  EXPECT_EQ(fs_->Attr(big)->st_size, 300000);
  EXPECT_EQ(fs_->Attr(InodeOf(kRoot, "run"))->st_mode, S_IFREG | 0755);
  EXPECT_EQ(fs_->Attr(InodeOf(kRoot, "empty"))->st_size, 0);
  const uint64_t latest = InodeOf(kRoot, "latest");
  EXPECT_EQ(fs_->Attr(latest)->st_mode, S_IFLNK | 0777);
  EXPECT_EQ(*fs_->ReadLink(latest), "lib/big");
  absl::StatusOr<mount::Listing> listing = fs_->List(lib);
  ASSERT_TRUE(listing.ok()) << listing.status();
  EXPECT_EQ(listing->parent, kRoot);
  ASSERT_EQ(listing->entries.size(), 1u);
  EXPECT_EQ(listing->entries[0].name, "big");
  EXPECT_EQ(listing->entries[0].inode, big);
  EXPECT_EQ(listing->entries[0].type, S_IFREG);
  listing = fs_->List(kRoot);
  ASSERT_TRUE(listing.ok()) << listing.status();
  std::vector<std::pair<std::string, mode_t>> root_entries;
  for (const mount::DirEntry& entry : listing->entries) {
    root_entries.emplace_back(entry.name, entry.type);
  }
  EXPECT_EQ(root_entries,
            (std::vector<std::pair<std::string, mode_t>>{{"empty", S_IFREG},
                                                         {"latest", S_IFLNK},
                                                         {"lib", S_IFDIR},
                                                         {"run", S_IFREG}}));
  EXPECT_EQ(fs_->TopNames(),
            (std::vector<std::string>{"empty", "latest", "lib", "run"}));
  EXPECT_EQ(fs_->inodes(), 6u);
  EXPECT_EQ(fs_->StatFs().f_blocks, (300000 + 10 + 4095) / 4096);
  // The wrong kind of inode, or none.
  EXPECT_EQ(fs_->Lookup(kRoot, "nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_->Lookup(big, "x").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(fs_->List(big).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(fs_->ReadLink(big).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fs_->Attr(99).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_->Read(lib, 0, 10, absl::Now()).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(TreeFsTest, ReadsRangesClippedAtTheEnd) {
  const uint64_t big = InodeOf(InodeOf(TreeIndex::kRootInode, "lib"), "big");
  for (const auto& [offset, size] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, 1}, {4095, 2}, {123456, 100000}, {0, 300000}}) {
    absl::StatusOr<Buffer> bytes = fs_->Read(big, offset, size, absl::Now());
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ(bytes->view(), big_.substr(offset, size)) << offset;
  }
  EXPECT_EQ(fs_->Read(big, 299990, 1 << 20, absl::Now())->view(),
            big_.substr(299990));
  EXPECT_EQ(fs_->Read(big, 300000, 10, absl::Now())->view(), "");
  EXPECT_EQ(fs_->Read(big, 400000, 10, absl::Now())->view(), "");
  EXPECT_EQ(
      fs_->Read(InodeOf(TreeIndex::kRootInode, "empty"), 0, 10, absl::Now())
          ->view(),
      "");
  EXPECT_EQ(fs_->failed_reads(), 0u);
}

TEST_F(TreeFsTest, AReadTheServerCannotServeFailsCountedAndLogged) {
  const uint64_t big = InodeOf(InodeOf(TreeIndex::kRootInode, "lib"), "big");
  server_.reset();  // the server is gone: each read fails within its timeout
  const absl::Time start = absl::Now();
  absl::StatusOr<Buffer> bytes = fs_->Read(big, 8192, 100, absl::Now());
  EXPECT_FALSE(bytes.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(fs_->failed_reads(), 1u);
  const std::string logged = Logged();
  EXPECT_NE(logged.find("read of lib/big [8192, 8292) (sha256:"),
            std::string::npos)
      << logged;
}

// A manifest whose size for a file is not its blob's (a writer of the store,
// or a bug) never cuts the file short nor reads past it: every read of it
// fails, logged, as get refuses it.
TEST_F(TreeFsTest, AFileWhoseBlobIsAnotherSizeFails) {
  const std::string path = NewTempDir() + "/f";
  WriteTestFile(path, RandomBytes(10000, 2));
  absl::StatusOr<sdk::PutResult> put = client_->PutFile(path, {});
  ASSERT_TRUE(put.ok()) << put.status();
  for (const uint64_t said : {uint64_t{4096}, uint64_t{20000}}) {
    sdk::TreeEntry file;
    file.path = "f";
    file.digest = put->info.digest;
    file.size = said;
    absl::StatusOr<std::unique_ptr<mount::TreeFs>> fs =
        mount::TreeFs::Create(*client_, {file}, {});
    ASSERT_TRUE(fs.ok()) << fs.status();
    const uint64_t inode = *(*fs)->Lookup(TreeIndex::kRootInode, "f");
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<Buffer> read = (*fs)->Read(inode, 0, 4096, absl::Now());
      EXPECT_EQ(read.status().code(), StatusCode::kDataLoss) << said;
    }
    EXPECT_EQ((*fs)->failed_reads(), 2u);
  }
}

}  // namespace
}  // namespace verity::testing
