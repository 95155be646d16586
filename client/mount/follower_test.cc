// --follow's polls and --prefetch against a client in memory: a new version
// shown, the one shown costing one Stat, a version that fails a check never
// shown, the first version prefetched; and the Follower's thread showing
// versions while readers read (under TSan, the races it would have).

#include "client/mount/follower.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/mount/verified_cache.h"
#include "client/testing/memory_client.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/manifest/tree_index.h"
#include "lib/manifest/versioned_folder.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/testing/test_blob.h"

namespace verity::mount {
namespace {

using ::verity::testing::MemoryClient;
using ::verity::testing::StoreTree;

class FollowerTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = FreshTestDir("follower_test"); }

  // Stores a tree whose file "config" holds `config` and points "app" at it.
  sdk::Digest Publish(const std::string& config) {
    absl::StatusOr<sdk::Digest> tree =
        StoreTree(client_, absl::StrCat(root_, "/source", published_++),
                  {{"config", config}, {"lib/big", big_}});
    EXPECT_TRUE(tree.ok()) << tree.status();
    client_.Point("app", *tree);
    return *tree;
  }

  // Loads what "app" names now and shows it: the mount's first version.
  void ShowFirst() {
    absl::StatusOr<MountVersion> first = LoadVersion(client_, ref_, options_);
    ASSERT_TRUE(first.ok()) << first.status();
    fs_.Show(VersionedFolder::IdOf(first->digest.ToString()),
             std::move(first->fs));
  }

  std::unique_ptr<VersionPoller> NewPoller(bool prefetch) {
    return std::make_unique<VersionPoller>(client_, ref_, options_, prefetch,
                                           fs_, [this](absl::string_view line) {
                                             absl::MutexLock lock(&mu_);
                                             log_.push_back(std::string(line));
                                           });
  }

  // The current version's "config".
  std::string Config() {
    std::shared_ptr<TreeFs> tree = fs_.current_tree();
    const uint64_t inode = *tree->Lookup(TreeIndex::kRootInode, "config");
    absl::StatusOr<Buffer> bytes = tree->Read(inode, 0, 100, absl::Now());
    return bytes.ok() ? std::string(bytes->view()) : bytes.status().ToString();
  }

  // Waits (bounded) for a log line holding `text`.
  bool AwaitLogged(absl::string_view text) {
    for (int i = 0; i < 4000; ++i) {
      {
        absl::MutexLock lock(&mu_);
        for (const std::string& line : log_) {
          if (absl::StrContains(line, text)) return true;
        }
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }

  std::string Log() {
    absl::MutexLock lock(&mu_);
    return absl::StrJoin(log_, "\n");
  }

  std::string root_;
  int published_ = 0;
  const std::string big_ = RandomBytes(3 << 20, 5);
  MemoryClient client_;
  const client::BlobRef ref_{std::nullopt, "app"};
  TreeFsOptions options_;
  FollowedFs fs_{absl::UnixEpoch(), 0, 0};
  absl::Mutex mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
};

TEST_F(FollowerTest, ANewVersionIsShownAndTheOneShownCostsOneStat) {
  Publish("one");
  ShowFirst();
  std::unique_ptr<VersionPoller> poller = NewPoller(/*prefetch=*/false);
  const uint64_t fetches = client_.calls(MemoryClient::Call::kFetch);
  poller->Poll();
  EXPECT_EQ(client_.calls(MemoryClient::Call::kStatName), 2u);
  EXPECT_EQ(client_.calls(MemoryClient::Call::kFetch), fetches);
  EXPECT_EQ(Config(), "one");

  const sdk::Digest two = Publish("two");
  poller->Poll();
  EXPECT_EQ(fs_.current(), VersionedFolder::IdOf(two.ToString()));
  EXPECT_EQ(Config(), "two");
  EXPECT_TRUE(
      AwaitLogged("app: now showing " + two.ToString() + " (3 entries)"))
      << Log();
}

TEST_F(FollowerTest, AVersionThatFailsACheckIsLoggedAndNeverShown) {
  const sdk::Digest one = Publish("one");
  ShowFirst();
  std::unique_ptr<VersionPoller> poller = NewPoller(/*prefetch=*/false);
  // The name's statement is refused (as the trusting client refuses it).
  Publish("two");
  client_.Fail(MemoryClient::Call::kStatName,
               absl::DataLossError("a rolled-back statement"));
  poller->Poll();
  EXPECT_TRUE(AwaitLogged("app: not followed, still showing " +
                          VersionedFolder::IdOf(one.ToString()) +
                          ": DATA_LOSS: a rolled-back statement"))
      << Log();
  client_.Fail(MemoryClient::Call::kStatName, absl::OkStatus());
  // Its manifest does not verify.
  const sdk::Digest three = Publish("three");
  client_.FailBlob(three, absl::DataLossError("a block does not verify"));
  poller->Poll();
  EXPECT_EQ(fs_.current(), VersionedFolder::IdOf(one.ToString()));
  EXPECT_EQ(Config(), "one");
}

TEST_F(FollowerTest, TheFirstVersionIsPrefetchedIntoTheCache) {
  absl::StatusOr<std::unique_ptr<VerifiedCache>> cache = VerifiedCache::Open(
      root_ + "/cache", uint64_t{64} << 20, NewReadBuffers());
  ASSERT_TRUE(cache.ok()) << cache.status();
  options_.cache = *std::move(cache);
  Publish("one");
  ShowFirst();
  std::unique_ptr<VersionPoller> poller = NewPoller(/*prefetch=*/true);
  poller->Start();
  EXPECT_TRUE(AwaitLogged("prefetch done: 2 files in the cache")) << Log();
  EXPECT_GE(options_.cache->stats().misses, 3u);  // big's 1 MiB slabs
}

// Readers read the version shown while the Follower's thread switches:
// each read is one whole version's content.
TEST_F(FollowerTest, TheThreadShowsVersionsWhileReadersRead) {
  Publish("v0");
  ShowFirst();
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) {
    readers.emplace_back([&] {
      while (!done.load()) {
        const std::string config = Config();
        if (!absl::StartsWith(config, "v")) bad++;
      }
    });
  }
  {
    Follower follower(NewPoller(/*prefetch=*/false), absl::Milliseconds(5));
    for (int version = 1; version <= 5; ++version) {
      const sdk::Digest digest = Publish(absl::StrCat("v", version));
      EXPECT_TRUE(AwaitLogged("now showing " + digest.ToString())) << Log();
    }
  }
  done.store(true);
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(Config(), "v5");
}

}  // namespace
}  // namespace verity::mount
