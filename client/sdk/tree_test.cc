// The SDK's tree calls over a client in memory, with no channel, so that
// their threads (PutTree's uploads, TreeWriter's concurrent BatchRead and
// Fetch calls and its busy retries) run under ThreadSanitizer too:
// tests/sdk/tree_calls_test.cc covers them against a real verityd.

#include "verity/tree.h"

#include <fcntl.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/testing/memory_client.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/testing/test_blob.h"

namespace verity::sdk {
namespace {

using ::verity::testing::MemoryClient;
using ::verity::testing::StoreTree;

// 300 small files in 10 folders, and 4 over BatchRead's largest blob.
std::map<std::string, std::string> ManyFiles() {
  std::map<std::string, std::string> files;
  for (int i = 0; i < 300; ++i) {
    files[absl::StrCat("d", i % 10, "/f", i)] = RandomBytes(100 + i * 13, i);
  }
  for (int i = 0; i < 4; ++i) {
    files[absl::StrCat("big", i)] = RandomBytes((1 << 20) + i * 4096, 500 + i);
  }
  return files;
}

void ExpectHolds(const std::string& folder,
                 const std::map<std::string, std::string>& files) {
  for (const auto& [path, bytes] : files) {
    EXPECT_EQ(ReadTestFile(JoinPath(folder, path)).value_or("<none>"), bytes)
        << path;
  }
}

// ManyFiles() stored as a tree through `client` and read back: its entries.
std::vector<TreeEntry> StoreManyFiles(MemoryClient& client,
                                      const std::string& root) {
  absl::StatusOr<Digest> tree =
      StoreTree(client, JoinPath(root, "source"), ManyFiles());
  EXPECT_TRUE(tree.ok()) << tree.status();
  absl::StatusOr<std::vector<TreeEntry>> entries =
      ReadTree(client, *tree, FetchOptions());
  EXPECT_TRUE(entries.ok()) << entries.status();
  return entries.value_or(std::vector<TreeEntry>());
}

// WriteTree of `entries` into ROOT/out, 8 files at a time.
absl::StatusOr<FetchTreeResult> WriteOut(
    MemoryClient& client, const std::string& root,
    const std::vector<TreeEntry>& entries) {
  const std::string out = JoinPath(root, "out");
  RETURN_IF_ERROR(MakeDirs(out));
  FetchTreeOptions options;
  options.parallel = 8;
  return WriteTree(client, entries, out, options);
}

TEST(TreeTest, PutAndWriteManyFilesConcurrently) {
  const std::string root = FreshTestDir("tree_test");
  MemoryClient client;
  const std::map<std::string, std::string> files = ManyFiles();
  const std::vector<TreeEntry> entries = StoreManyFiles(client, root);
  EXPECT_GE(client.calls(MemoryClient::Call::kPut), 5u);  // 4 big, a manifest
  absl::StatusOr<FetchTreeResult> written = WriteOut(client, root, entries);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->files, files.size());
  EXPECT_EQ(written->files_fetched, files.size());
  const std::string out = JoinPath(root, "out");
  ExpectHolds(out, files);
  absl::StatusOr<UniqueFd> fd = OpenFile(out, O_RDONLY | O_DIRECTORY);
  ASSERT_TRUE(fd.ok()) << fd.status();
  const absl::Status held = VerifyFolder(fd->get(), out, entries, {});
  EXPECT_TRUE(held.ok()) << held;
}

// A BatchRead refused for the server's budget (after 1 s, while the large
// files' fetches, 100 ms each, complete: the tree progresses) is sent again;
// every file arrives.
TEST(TreeTest, RefusedBatchReadsAreSentAgainWhileOthersProgress) {
  const std::string root = FreshTestDir("tree_test_busy");
  MemoryClient client;
  const std::vector<TreeEntry> entries = StoreManyFiles(client, root);
  const uint64_t before = client.calls(MemoryClient::Call::kBatchRead);
  client.Fail(MemoryClient::Call::kBatchRead,
              absl::ResourceExhaustedError("BatchRead budget"), 1);
  client.Delay(MemoryClient::Call::kBatchRead, absl::Seconds(1));
  client.Delay(MemoryClient::Call::kFetch, absl::Milliseconds(100));
  absl::StatusOr<FetchTreeResult> written = WriteOut(client, root, entries);
  ASSERT_TRUE(written.ok()) << written.status();
  ExpectHolds(JoinPath(root, "out"), ManyFiles());
  EXPECT_EQ(client.calls(MemoryClient::Call::kBatchRead), before + 2);
}

}  // namespace
}  // namespace verity::sdk
