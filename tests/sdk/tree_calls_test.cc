// The SDK's tree calls (verity/tree.h) against a real verityd: a folder put
// and fetched back; only missing blobs sent; an update fetches only what
// changed; what a fetch refuses leaves the target as it was; a server whose
// BatchRead budget is smaller than the fetch's calls in flight is waited for;
// a put follows no folder swapped for a symlink after its scan.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/sdk/sdk_fixture.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"
#include "verity/tree.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

ino_t Inode(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

class TreeCallsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = TestServer::Start();
    client_ =
        *sdk::Client::Create(FastRetryOptions(server_->verityd().address()));
    root_ = NewTempDir();
    source_ = root_ + "/source";
    ASSERT_EQ(mkdir(source_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((source_ + "/lib").c_str(), 0755), 0);
    WriteTestFile(source_ + "/lib/big", RandomBytes(300000, 1));
    WriteTestFile(source_ + "/lib/copy", RandomBytes(300000, 1));
    WriteTestFile(source_ + "/run", RandomBytes(5000, 2), 0755);
    WriteTestFile(source_ + "/empty", "");
    ASSERT_EQ(symlink("lib/big", (source_ + "/latest").c_str()), 0);
  }

  sdk::LocalTree Scan() {
    absl::StatusOr<sdk::LocalTree> tree =
        sdk::ScanTree(source_, sdk::DigestAlgorithm::kSha256, 2);
    EXPECT_TRUE(tree.ok()) << tree.status();
    return *std::move(tree);
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<sdk::Client> client_;
  std::string root_, source_;
};

TEST_F(TreeCallsTest, PutsOnlyWhatIsMissingAndFetchesItBack) {
  const sdk::LocalTree tree = Scan();
  EXPECT_EQ(tree.entries.size(), 6u);
  EXPECT_EQ(tree.file_bytes, 605000u);
  sdk::PutTreeOptions put;
  put.name = "release";
  absl::StatusOr<sdk::PutTreeResult> first = sdk::PutTree(*client_, tree, put);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->info.digest, tree.digest);
  EXPECT_EQ(first->files, 4u);
  EXPECT_EQ(first->blobs_sent, 3u);  // lib/copy is lib/big's content
  EXPECT_EQ(first->bytes_sent, 305000u);
  absl::StatusOr<sdk::PutTreeResult> again = sdk::PutTree(*client_, tree, put);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->blobs_sent, 0u);

  const std::string out = root_ + "/out";
  absl::StatusOr<sdk::FetchTreeResult> fetched =
      sdk::FetchTree(*client_, tree.digest, out, {});
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_EQ(fetched->files, 4u);
  EXPECT_EQ(fetched->files_fetched, 3u);
  EXPECT_EQ(fetched->files_copied, 1u);
  EXPECT_EQ(ReadFile(out + "/lib/copy"), ReadFile(source_ + "/lib/copy"));
  EXPECT_EQ(ReadFile(out + "/run"), ReadFile(source_ + "/run"));
  EXPECT_EQ(access((out + "/run").c_str(), X_OK), 0);
  EXPECT_TRUE(Exists(out + "/empty"));
  char target[32] = {};
  ASSERT_GT(readlink((out + "/latest").c_str(), target, sizeof target), 0);
  EXPECT_STREQ(target, "lib/big");
  EXPECT_NE(Inode(out + "/lib/big"), Inode(out + "/lib/copy"));

  absl::StatusOr<std::vector<sdk::TreeEntry>> entries =
      sdk::ReadTree(*client_, tree.digest, {});
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), tree.entries.size());
  EXPECT_EQ((*entries)[0].path, "empty");
  // The server marks what a tree Put stored, and only that.
  EXPECT_TRUE(client_->Stat(tree.digest)->tree_manifest);
  EXPECT_EQ((*entries)[3].path, "lib/big");
  EXPECT_FALSE(client_->Stat(*(*entries)[3].digest)->tree_manifest);
}

// The server reads 16 blobs for BatchRead calls at once (one call's window)
// and the fetch sends 8 calls at a time: most are refused, and each is sent
// again while the others fetch files, though the client itself does not
// retry (max_attempts 1).
TEST(TreeCallsBusyTest, CallsTheServerRefusesWaitWhileOthersFetch) {
  server::ServerOptions options;
  options.service.max_batch_read_blobs = 16;
  const std::unique_ptr<TestServer> server = TestServer::Start(options);
  sdk::ClientOptions client_options =
      FastRetryOptions(server->verityd().address());
  client_options.retry.max_attempts = 1;
  const std::unique_ptr<sdk::Client> client =
      *sdk::Client::Create(client_options);
  const std::string source = NewTempDir() + "/many";
  ASSERT_EQ(mkdir(source.c_str(), 0755), 0);
  for (int i = 0; i < 2000; ++i) {
    WriteTestFile(absl::StrCat(source, "/f", i), RandomBytes(1000, i));
  }
  absl::StatusOr<sdk::LocalTree> tree =
      sdk::ScanTree(source, sdk::DigestAlgorithm::kSha256, 2);
  ASSERT_TRUE(tree.ok()) << tree.status();
  ASSERT_TRUE(sdk::PutTree(*client, *tree, {}).ok());
  const std::string out = NewTempDir() + "/out";
  absl::StatusOr<sdk::FetchTreeResult> fetched =
      sdk::FetchTree(*client, tree->digest, out, {});
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_EQ(fetched->files_fetched, 2000u);
  EXPECT_EQ(ReadFile(out + "/f1234"), RandomBytes(1000, 1234));
}

// A batch reads its files beneath the folder as scanned: a folder swapped
// for a symlink since the scan is refused, not followed, and no tree is
// stored.
TEST_F(TreeCallsTest, APutFollowsNoFolderSwappedForASymlinkAfterTheScan) {
  ASSERT_EQ(mkdir((source_ + "/conf").c_str(), 0755), 0);
  WriteTestFile(source_ + "/conf/app.json", RandomBytes(2000, 3));
  const sdk::LocalTree tree = Scan();
  ASSERT_EQ(rename((source_ + "/conf").c_str(), (root_ + "/elsewhere").c_str()),
            0);
  ASSERT_EQ(
      symlink((root_ + "/elsewhere").c_str(), (source_ + "/conf").c_str()), 0);
  const absl::StatusOr<sdk::PutTreeResult> put =
      sdk::PutTree(*client_, tree, {});
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), StatusCode::kFailedPrecondition)
      << put.status();
  EXPECT_NE(put.status().message().find("conf/app.json"), std::string::npos)
      << put.status();
  EXPECT_EQ(client_->Stat(tree.digest).status().code(), StatusCode::kNotFound);
}

TEST_F(TreeCallsTest, AnUpdateFetchesOnlyWhatChanged) {
  ASSERT_TRUE(sdk::PutTree(*client_, Scan(), {}).ok());
  const std::string out = root_ + "/out";
  ASSERT_TRUE(sdk::FetchTree(*client_, Scan().digest, out, {}).ok());
  const ino_t big = Inode(out + "/lib/big");
  WriteTestFile(source_ + "/run", RandomBytes(5000, 3), 0755);
  const sdk::LocalTree v2 = Scan();
  ASSERT_TRUE(sdk::PutTree(*client_, v2, {}).ok());
  absl::StatusOr<sdk::FetchTreeResult> update =
      sdk::FetchTree(*client_, v2.digest, out, {});
  ASSERT_TRUE(update.ok()) << update.status();
  EXPECT_EQ(update->files_fetched, 1u);
  EXPECT_EQ(update->bytes_fetched, 5000u);
  EXPECT_EQ(update->files_reused, 2u);  // empty and lib/big; lib/copy copied
  EXPECT_EQ(Inode(out + "/lib/big"), big);
  EXPECT_EQ(ReadFile(out + "/run"), ReadFile(source_ + "/run"));
}

TEST_F(TreeCallsTest, KnownEntriesAreLinkedWithoutHashingAndOnlyThose) {
  const sdk::LocalTree v1 = Scan();
  ASSERT_TRUE(sdk::PutTree(*client_, v1, {}).ok());
  const std::string first = root_ + "/first";
  ASSERT_EQ(mkdir(first.c_str(), 0755), 0);
  ASSERT_TRUE(sdk::WriteTree(*client_, v1.entries, first, {}).ok());
  // What the caller says `first` holds: right for lib/big, wrong for run
  // (another digest), so run is fetched though its bytes there are the same.
  std::vector<sdk::TreeEntry> known = v1.entries;
  ASSERT_EQ(known[5].path, "run");
  known[5].digest = known[3].digest;
  sdk::FetchTreeOptions options;
  options.reuse_from = first;
  options.reuse_entries = known;
  const std::string second = root_ + "/second";
  ASSERT_EQ(mkdir(second.c_str(), 0755), 0);
  absl::StatusOr<sdk::FetchTreeResult> written =
      sdk::WriteTree(*client_, v1.entries, second, options);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->files_reused, 2u);   // empty and lib/big
  EXPECT_EQ(written->files_fetched, 1u);  // run
  EXPECT_EQ(Inode(second + "/lib/big"), Inode(first + "/lib/big"));
  EXPECT_NE(Inode(second + "/run"), Inode(first + "/run"));
  EXPECT_EQ(ReadFile(second + "/run"), ReadFile(source_ + "/run"));
}

TEST_F(TreeCallsTest, ARefusedFetchLeavesTheFolderAsItWas) {
  const sdk::LocalTree tree = Scan();
  ASSERT_TRUE(sdk::PutTree(*client_, tree, {}).ok());
  const std::string out = root_ + "/out";
  ASSERT_EQ(mkdir(out.c_str(), 0755), 0);
  WriteTestFile(out + "/mine", "kept");
  // A file whose size disagrees with its blob.
  std::vector<sdk::TreeEntry> entries = tree.entries;
  ASSERT_EQ(entries[5].path, "run");
  entries[5].size += 1;
  const std::string partial = root_ + "/partial";
  ASSERT_EQ(mkdir(partial.c_str(), 0755), 0);
  EXPECT_EQ(sdk::WriteTree(*client_, entries, partial, {}).status().code(),
            StatusCode::kDataLoss);
  // A blob that is not a tree, and one the server lacks.
  EXPECT_EQ(
      sdk::FetchTree(*client_, *entries[3].digest, out, {}).status().code(),
      StatusCode::kInvalidArgument);
  const sdk::Digest absent =
      *sdk::Digest::Parse(absl::StrCat("sha256:", std::string(64, '7')));
  EXPECT_EQ(sdk::FetchTree(*client_, absent, out, {}).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ReadFile(out + "/mine"), "kept");
  EXPECT_FALSE(Exists(out + "/run"));
  // An entry that escapes is refused before anything is written.
  entries = tree.entries;
  entries[1].path = "../escaped";
  const std::string clean = root_ + "/clean";
  ASSERT_EQ(mkdir(clean.c_str(), 0755), 0);
  EXPECT_EQ(sdk::WriteTree(*client_, entries, clean, {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(Exists(root_ + "/escaped"));
  // A target that is a file.
  WriteTestFile(root_ + "/file", "x");
  EXPECT_EQ(sdk::FetchTree(*client_, tree.digest, root_ + "/file", {})
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(TreeCallsTest, AFetchRemovesWhatAKilledOneLeftBesideTheFolder) {
  const sdk::LocalTree tree = Scan();
  ASSERT_TRUE(sdk::PutTree(*client_, tree, {}).ok());
  // A pid above pid_max belongs to no process; this process's own is alive.
  std::ifstream pid_max_file("/proc/sys/kernel/pid_max");
  long pid_max = 0;
  pid_max_file >> pid_max;
  const std::string out = root_ + "/out";
  const std::string dead = absl::StrCat(out, ".verity-", pid_max + 1, "-abc");
  const std::string alive = absl::StrCat(out, ".verity-", getpid(), "-def");
  ASSERT_EQ(mkdir(dead.c_str(), 0755), 0);
  WriteTestFile(dead + "/half", "x");
  ASSERT_EQ(mkdir(alive.c_str(), 0755), 0);
  ASSERT_TRUE(sdk::FetchTree(*client_, tree.digest, out + "/", {}).ok());
  EXPECT_FALSE(Exists(dead));
  EXPECT_TRUE(Exists(alive));
  EXPECT_EQ(ReadFile(out + "/run"), ReadFile(source_ + "/run"));
}

}  // namespace
}  // namespace verity::testing
