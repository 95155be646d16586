// What `verity mount --follow` answers (client/mount/followed_fs.h), without
// FUSE, against a real verityd: versions shown in `verity sync`'s layout,
// ..data switched to each new one, names that changed given to the kernel to
// forget, the version before kept, and an older one kept hidden while a file
// of it is open, dropped when the last is released.

#include "client/mount/followed_fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "lib/manifest/versioned_folder.h"
#include "tests/sdk/sdk_fixture.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"
#include "verity/tree.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;
constexpr uint64_t kRoot = 1;

// Records what the kernel is told to forget.
class RecordingCache final : public mount::KernelCache {
 public:
  void ForgetEntry(uint64_t parent, absl::string_view name) override {
    absl::MutexLock lock(&mu_);
    entries_.push_back(absl::StrCat(parent, "/", name));
  }
  void ForgetInode(uint64_t inode) override {
    absl::MutexLock lock(&mu_);
    entries_.push_back(absl::StrCat(inode));
  }
  std::vector<std::string> Take() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> taken = std::move(entries_);
    std::sort(taken.begin(), taken.end());
    return taken;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> entries_ ABSL_GUARDED_BY(mu_);
};

std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

class FollowedFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = TestServer::Start();
    client_ =
        *sdk::Client::Create(FastRetryOptions(server_->verityd().address()));
    fs_.SetKernelCache(&kernel_);
  }
  void TearDown() override { fs_.SetKernelCache(nullptr); }

  // A version: a/config holding `config`, and a top-level file named `top`.
  std::pair<std::string, std::unique_ptr<mount::TreeFs>> Version(
      const std::string& config, const std::string& top) {
    const std::string source = NewTempDir() + "/" + config;
    EXPECT_EQ(mkdir(source.c_str(), 0755), 0);
    EXPECT_EQ(mkdir((source + "/a").c_str(), 0755), 0);
    WriteTestFile(source + "/a/config", config);
    WriteTestFile(source + "/" + top, top);
    absl::StatusOr<sdk::LocalTree> tree =
        sdk::ScanTree(source, sdk::DigestAlgorithm::kSha256, 2);
    EXPECT_TRUE(tree.ok()) << tree.status();
    EXPECT_TRUE(sdk::PutTree(*client_, *tree, {}).ok());
    absl::StatusOr<std::vector<sdk::TreeEntry>> entries =
        sdk::ReadTree(*client_, tree->digest, {});
    EXPECT_TRUE(entries.ok()) << entries.status();
    absl::StatusOr<std::unique_ptr<mount::TreeFs>> fs =
        mount::TreeFs::Create(*client_, *entries, {});
    EXPECT_TRUE(fs.ok()) << fs.status();
    return {VersionedFolder::IdOf(tree->digest.ToString()), *std::move(fs)};
  }

  // Resolves `path` from the root as the kernel would, following symlinks
  // in the root (..data and the top-level links).
  absl::StatusOr<uint64_t> Resolve(const std::string& path) {
    uint64_t inode = kRoot;
    std::vector<std::string> parts = absl::StrSplit(path, '/');
    for (size_t i = 0; i < parts.size(); ++i) {
      absl::StatusOr<uint64_t> next = fs_.Lookup(inode, parts[i]);
      if (!next.ok()) return next.status();
      absl::StatusOr<struct stat> attr = fs_.Attr(*next);
      if (!attr.ok()) return attr.status();
      if (S_ISLNK(attr->st_mode)) {
        absl::StatusOr<std::string> target = fs_.ReadLink(*next);
        if (!target.ok()) return target.status();
        absl::StatusOr<uint64_t> resolved = Resolve(*target);
        if (!resolved.ok()) return resolved.status();
        next = resolved;
      }
      inode = *next;
    }
    return inode;
  }

  std::string ReadAll(uint64_t inode) {
    absl::StatusOr<Buffer> bytes = fs_.Read(inode, 0, 1 << 20, absl::Now());
    return bytes.ok() ? std::string(bytes->view()) : bytes.status().ToString();
  }

  std::vector<std::string> RootNames() {
    std::vector<std::string> names;
    const absl::StatusOr<mount::Listing> listing = fs_.List(kRoot);
    for (const mount::DirEntry& entry : listing->entries) {
      names.push_back(entry.name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<sdk::Client> client_;
  RecordingCache kernel_;
  mount::FollowedFs fs_{absl::UnixEpoch(), 0, 0};
};

TEST_F(FollowedFsTest, NothingBeforeTheFirstVersion) {
  EXPECT_TRUE(fs_.List(kRoot)->entries.empty());
  EXPECT_EQ(fs_.Lookup(kRoot, "..data").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.Attr(kRoot)->st_mode, S_IFDIR | 0755);
}

TEST_F(FollowedFsTest, VersionsSwitchAndOpenFilesKeepTheirs) {
  auto [v1, fs1] = Version("one", "only-in-1");
  fs_.Show(v1, std::move(fs1));
  EXPECT_EQ(RootNames(),
            Sorted({absl::StrCat("..", v1), "..data", "a", "only-in-1"}));
  EXPECT_EQ(*fs_.ReadLink(*fs_.Lookup(kRoot, "..data")), ".." + v1);
  EXPECT_EQ(*fs_.ReadLink(*fs_.Lookup(kRoot, "a")), "..data/a");
  absl::StatusOr<uint64_t> config1 = Resolve("a/config");
  ASSERT_TRUE(config1.ok()) << config1.status();
  EXPECT_EQ(ReadAll(*config1), "one");
  EXPECT_EQ(fs_.Attr(*config1)->st_ino, *config1);
  fs_.Opened(*config1);  // a reader holds it open across the switches
  kernel_.Take();

  auto [v2, fs2] = Version("two", "only-in-2");
  fs_.Show(v2, std::move(fs2));
  // ..data, the new version's folder, the name gone and the name new, and
  // the root's listing.
  EXPECT_EQ(kernel_.Take(), Sorted({"1", absl::StrCat("1/..", v2), "1/..data",
                                    "1/only-in-1", "1/only-in-2"}));
  EXPECT_EQ(RootNames(), Sorted({absl::StrCat("..", v1), absl::StrCat("..", v2),
                                 "..data", "a", "only-in-2"}));
  EXPECT_EQ(ReadAll(*Resolve("a/config")), "two");
  EXPECT_EQ(Resolve("only-in-1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadAll(*Resolve("..data/only-in-2")), "only-in-2");

  auto [v3, fs3] = Version("three", "only-in-2");
  fs_.Show(v3, std::move(fs3));
  // v1 is neither current nor the one before: hidden, but kept while open.
  EXPECT_EQ(fs_.Lookup(kRoot, ".." + v1).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(kernel_.Take(), Sorted({"1", absl::StrCat("1/..", v1),
                                    absl::StrCat("1/..", v3), "1/..data"}));
  EXPECT_EQ(ReadAll(*Resolve("a/config")), "three");
  EXPECT_EQ(ReadAll(*config1), "one");
  EXPECT_EQ(fs_.versions(), 3u);
  fs_.Released(*config1);
  EXPECT_EQ(fs_.versions(), 2u);
  EXPECT_EQ(fs_.Attr(*config1).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.Read(*config1, 0, 10, absl::Now()).status().code(),
            StatusCode::kNotFound);
}

TEST_F(FollowedFsTest, TheSameVersionAgainChangesNothing) {
  auto [v1, fs1] = Version("one", "x");
  const std::string id = v1;
  fs_.Show(id, std::move(fs1));
  const uint64_t data = *fs_.Lookup(kRoot, "..data");
  kernel_.Take();
  auto [again, fs_again] = Version("one", "x");
  EXPECT_EQ(again, id);
  fs_.Show(again, std::move(fs_again));
  EXPECT_EQ(*fs_.Lookup(kRoot, "..data"), data);
  EXPECT_TRUE(kernel_.Take().empty());
  EXPECT_EQ(fs_.versions(), 1u);
}

// A name no version shows is dropped: versions with ever new names do not
// grow what the mount holds, and a name keeps its link's inode while shown.
TEST_F(FollowedFsTest, LinksAreThoseOfTheCurrentVersionOnly) {
  uint64_t kept = 0;
  for (int i = 0; i < 5; ++i) {
    auto [id, fs] = Version(absl::StrCat("v", i), absl::StrCat("name-", i));
    fs_.Show(id, std::move(fs));
    EXPECT_EQ(fs_.links(), 2u);  // "a" and name-i
    const uint64_t a = *fs_.Lookup(kRoot, "a");
    if (i > 0) EXPECT_EQ(a, kept);
    kept = a;
  }
  EXPECT_EQ(fs_.Lookup(kRoot, "name-0").status().code(), StatusCode::kNotFound);
}

TEST_F(FollowedFsTest, TheWrongKindOfInode) {
  auto [v1, fs1] = Version("one", "x");
  fs_.Show(v1, std::move(fs1));
  const uint64_t data = *fs_.Lookup(kRoot, "..data");
  EXPECT_EQ(fs_.List(data).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(fs_.Read(data, 0, 1, absl::Now()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(fs_.ReadLink(kRoot).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(fs_.Attr(12345).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.Attr(uint64_t{7} << 40).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace verity::testing
