// One `verity sync` attempt against a client in memory: a switch and its
// hook, unchanged files reused, the version in place kept and checked, each
// failure by its reason leaving the folder as it was, a version signed as a
// file refused, and the clock the status file is written from.

#include "client/sync/syncer.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/sync/sync_status.h"
#include "client/testing/memory_client.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/testing/test_blob.h"
#include "verity/tree.h"

namespace verity::sync {
namespace {

using ::absl::StatusCode;
using ::verity::testing::MemoryClient;
using ::verity::testing::StoreTree;
using Files = std::map<std::string, std::string>;

class SyncerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FreshTestDir("syncer_test");
    dir_ = root_ + "/synced";
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  }

  // Stores `files` as a tree and points "app" at it (with `statement`, as
  // the client reports a verified one); returns the tree's digest.
  sdk::Digest Publish(const Files& files,
                      std::optional<sdk::NameStatementInfo> statement = {}) {
    absl::StatusOr<sdk::Digest> tree =
        StoreTree(client_, absl::StrCat(root_, "/source", published_++), files);
    EXPECT_TRUE(tree.ok()) << tree.status();
    client_.Point("app", *tree, std::move(statement));
    return *tree;
  }

  std::unique_ptr<Syncer> NewSyncer() {
    absl::StatusOr<VersionedFolder> folder = VersionedFolder::Open(dir_);
    EXPECT_TRUE(folder.ok()) << folder.status();
    SyncerOptions options;
    options.name = "app";
    options.parallel = 4;
    options.log = [this](absl::string_view line) {
      log_.push_back(std::string(line));
    };
    options.on_switch = [this](const std::string& digest) {
      told_.push_back(digest);
      return hook_status_;
    };
    options.now = [this] { return now_; };
    return std::make_unique<Syncer>(client_, std::move(options),
                                    *std::move(folder));
  }

  // What DIR/<name> shows, through ..data.
  std::string Shown(const std::string& name) {
    return ReadTestFile(dir_ + "/" + name).value_or("<none>");
  }

  // The folder's entries that are versions or staging folders.
  std::vector<std::string> Versions() {
    std::vector<std::string> versions;
    const std::vector<std::string> names =
        ListDir(dir_).value_or(std::vector<std::string>());
    for (const std::string& name : names) {
      if (absl::StartsWith(name, "..") && name != "..data" &&
          name != std::string(kStatusFile)) {
        versions.push_back(name);
      }
    }
    std::sort(versions.begin(), versions.end());
    return versions;
  }

  // The folder's entry for the version of `digest` (the layout's
  // "..<id>").
  static std::string EntryOf(const sdk::Digest& digest) {
    return ".." + VersionedFolder::IdOf(digest.ToString());
  }

  bool Logged(absl::string_view text) const {
    for (const std::string& line : log_) {
      if (absl::StrContains(line, text)) return true;
    }
    return false;
  }

  std::string root_;
  std::string dir_;
  int published_ = 0;
  MemoryClient client_;
  std::vector<std::string> log_;
  std::vector<std::string> told_;
  absl::Status hook_status_;
  absl::Time now_ = absl::FromUnixSeconds(1796381433);
};

TEST_F(SyncerTest, SwitchesTellsTheAppAndPrunesWhatItReplaced) {
  const sdk::Digest v1 = Publish({{"config", "one"}, {"data", "1"}});
  std::unique_ptr<Syncer> syncer = NewSyncer();
  ASSERT_TRUE(syncer->Attempt().ok()) << absl::StrJoin(log_, "\n");
  EXPECT_EQ(Shown("config"), "one");
  EXPECT_EQ(told_, std::vector<std::string>{v1.ToString()});
  EXPECT_EQ(syncer->state().switches, 1u);
  EXPECT_EQ(syncer->state().digest, v1.ToString());

  const sdk::Digest v2 = Publish({{"config", "two"}, {"data", "1"}});
  ASSERT_TRUE(syncer->Attempt().ok());
  EXPECT_EQ(Shown("config"), "two");
  EXPECT_EQ(told_.back(), v2.ToString());
  // The version before stays for readers inside it.
  EXPECT_EQ(Versions().size(), 2u) << absl::StrJoin(Versions(), " ");

  const sdk::Digest v3 = Publish({{"config", "three"}, {"data", "1"}});
  ASSERT_TRUE(syncer->Attempt().ok());
  EXPECT_EQ(Shown("config"), "three");
  EXPECT_EQ(syncer->state().switches, 3u);
  EXPECT_EQ(Versions(), (std::vector<std::string>{EntryOf(v2), EntryOf(v3)}));
}

TEST_F(SyncerTest, UnchangedFilesAreReusedAndTheSameVersionCostsOneStat) {
  const std::string big = RandomBytes(300000, 1);
  Publish({{"big", big}, {"small", "a"}});
  std::unique_ptr<Syncer> syncer = NewSyncer();
  ASSERT_TRUE(syncer->Attempt().ok());
  const uint64_t fetches = client_.calls(MemoryClient::Call::kFetch);
  const uint64_t batches = client_.calls(MemoryClient::Call::kBatchRead);

  // Nothing new: one StatName, nothing read.
  ASSERT_TRUE(syncer->Attempt().ok());
  EXPECT_EQ(client_.calls(MemoryClient::Call::kFetch), fetches);
  EXPECT_EQ(client_.calls(MemoryClient::Call::kBatchRead), batches);
  EXPECT_EQ(syncer->state().switches, 1u);

  // A new version sharing `big`: only the manifest and `small` are read.
  Publish({{"big", big}, {"small", "b"}});
  ASSERT_TRUE(syncer->Attempt().ok());
  EXPECT_EQ(Shown("big"), big);
  EXPECT_EQ(Shown("small"), "b");
  EXPECT_TRUE(Logged("1 fetched (1 bytes), 1 reused")) << log_.back();
  EXPECT_EQ(client_.calls(MemoryClient::Call::kFetch),
            fetches + 1);  // manifest
}

TEST_F(SyncerTest, AVersionInPlaceFromAnotherProcessIsCheckedBeforeItIsKept) {
  Publish({{"config", "one"}});
  ASSERT_TRUE(NewSyncer()->Attempt().ok());
  // A new process finds it in place: checked whole, kept, not switched.
  std::unique_ptr<Syncer> syncer = NewSyncer();
  ASSERT_TRUE(syncer->Attempt().ok());
  EXPECT_EQ(syncer->state().switches, 0u);
  EXPECT_EQ(Shown("config"), "one");
  // One whose file was changed on the disk is fetched again and switched to.
  const std::string path = dir_ + "/..data/config";
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  ASSERT_TRUE(ReplaceFileDurably(path + ".tmp", path, "tampered").ok());
  syncer.reset();  // the folder is one process's at a time
  syncer = NewSyncer();
  ASSERT_TRUE(syncer->Attempt().ok());
  EXPECT_TRUE(Logged("the version in place is not its tree")) << log_.back();
  EXPECT_EQ(syncer->state().switches, 1u);
  EXPECT_EQ(Shown("config"), "one");
}

TEST_F(SyncerTest, EachFailureKeepsTheVersionInPlaceAndSaysWhy) {
  const sdk::Digest v1 = Publish({{"config", "one"}});
  std::unique_ptr<Syncer> syncer = NewSyncer();
  ASSERT_TRUE(syncer->Attempt().ok());
  const std::vector<std::string> versions = Versions();

  // The server cannot be reached.
  client_.Fail(MemoryClient::Call::kStatName,
               absl::UnavailableError("connection refused"));
  EXPECT_EQ(syncer->Attempt().code(), StatusCode::kUnavailable);
  client_.Fail(MemoryClient::Call::kStatName, absl::OkStatus());
  // A block of the new version does not verify: nothing staged is left.
  Publish({{"config", "two, damaged"}});
  const sdk::Digest damaged = client_.Add("two, damaged");
  client_.FailBlob(damaged, absl::DataLossError("a block does not verify"));
  EXPECT_EQ(syncer->Attempt().code(), StatusCode::kDataLoss);
  // The name is gone.
  ASSERT_TRUE(client_.DeleteName("app").ok());
  EXPECT_EQ(syncer->Attempt().code(), StatusCode::kNotFound);

  EXPECT_EQ(Shown("config"), "one");
  EXPECT_EQ(Versions(), versions);
  EXPECT_EQ(syncer->state().digest, v1.ToString());
  EXPECT_EQ(syncer->state().switches, 1u);
  EXPECT_TRUE(Logged("failed, keeping " + v1.ToString())) << log_.back();
  const std::string status = *ReadTestFile(dir_ + "/" + kStatusFile);
  EXPECT_TRUE(absl::StrContains(status, "state: failing\n")) << status;
  EXPECT_TRUE(absl::StrContains(status, "last_error: no name app\n")) << status;
}

TEST_F(SyncerTest, AVersionSignedAsAFileIsNeverSwitchedTo) {
  sdk::NameStatementInfo statement;
  statement.verified = true;
  statement.tree = false;
  statement.version = 4;
  Publish({{"config", "one"}}, statement);
  std::unique_ptr<Syncer> syncer = NewSyncer();
  const absl::Status status = syncer->Attempt();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status;
  EXPECT_TRUE(told_.empty());
  EXPECT_TRUE(Versions().empty()) << absl::StrJoin(Versions(), " ");
  // Signed as a tree: switched to, its version reported.
  statement.tree = true;
  statement.version = 5;
  Publish({{"config", "one"}}, statement);
  ASSERT_TRUE(syncer->Attempt().ok());
  EXPECT_EQ(syncer->state().version, 5u);
}

TEST_F(SyncerTest, TheStatusFileIsWrittenFromTheClockAndAHookFailureLogged) {
  Publish({{"config", "one"}});
  hook_status_ = absl::InternalError("--exec-on-update exited with status 3");
  std::unique_ptr<Syncer> syncer = NewSyncer();
  ASSERT_TRUE(syncer->Attempt().ok());  // the hook's failure is not the sync's
  EXPECT_TRUE(Logged("exited with status 3"));
  now_ += absl::Minutes(5);
  client_.Fail(MemoryClient::Call::kStatName,
               absl::UnavailableError("down\n\x1b[2J"));
  EXPECT_FALSE(syncer->Attempt().ok());
  const std::string status = *ReadTestFile(dir_ + "/" + kStatusFile);
  EXPECT_TRUE(absl::StrContains(status, "last_success: 2026-12-04T10:50:33Z\n"))
      << status;
  EXPECT_TRUE(absl::StrContains(status, "last_attempt: 2026-12-04T10:55:33Z\n"))
      << status;
  // The server's words, escaped: one line.
  EXPECT_TRUE(absl::StrContains(status, "last_error: down\\n\\x1b[2J\n"))
      << status;
  EXPECT_TRUE(CheckReady(status, absl::Minutes(10), now_).ok());
  EXPECT_EQ(CheckReady(status, absl::Minutes(1), now_).code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace verity::sync
