// The seen-names store: rollback and same-version swaps are refused, records
// only go up, a damaged file stays an error, and concurrent clients (threads
// and processes) lose no record and never lower a version.

#include "client/sdk/seen_names.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/sdk/seen_names_file.h"
#include "client/testing/name_statements.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"

namespace verity::client {
namespace {

class SeenNamesTest : public ::testing::Test {
 protected:
  SeenNamesTest()
      : key_(Ed25519PrivateKey::Generate()),
        digest_{HashAlgorithm::kSha256, std::string(32, 'd')} {
    dir_ = ::testing::TempDir() + "/seen_names_test_XXXXXX";
    EXPECT_NE(mkdtemp(&dir_[0]), nullptr);
    dir_ += "/state/verity";  // created on first use
  }

  NameStatement Statement(const std::string& name, uint64_t version,
                          absl::Duration valid_for = absl::Hours(24)) {
    TestClaim claim{name, digest_, version};
    claim.valid_for = valid_for;
    return ParseTestStatement(SignTestStatement(claim, {&key_}));
  }

  Ed25519PrivateKey key_;
  ParsedDigest digest_;
  std::string dir_;
  const std::string key_id_ = std::string(64, 'f');
};

TEST_F(SeenNamesTest, RecordsAndRefusesRollback) {
  SeenNamesStore store(dir_, SeenNamesKind::kAccepted, key_id_);
  EXPECT_EQ(store.Lookup("n")->version, 0u);  // no file yet
  const NameStatement v2 = Statement("n", 2);
  ASSERT_TRUE(store.CheckAndRecord("n", v2).ok());
  EXPECT_EQ(store.Lookup("n")->version, 2u);
  EXPECT_EQ(store.Lookup("n")->body_sha256, SeenNameOf(v2).body_sha256);
  // The same statement again is fine; another of the same version is not.
  EXPECT_TRUE(store.CheckAndRecord("n", v2).ok());
  const absl::Status swapped =
      store.CheckAndRecord("n", Statement("n", 2, absl::Hours(48)));
  EXPECT_EQ(swapped.code(), absl::StatusCode::kFailedPrecondition) << swapped;
  const absl::Status older = store.CheckAndRecord("n", Statement("n", 1));
  EXPECT_EQ(older.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(older.message(), swapped.message());
  EXPECT_EQ(store.Lookup("n")->version, 2u);
  ASSERT_TRUE(store.CheckAndRecord("n", Statement("n", 5)).ok());
  EXPECT_EQ(store.Lookup("n")->version, 5u);
  // Names are independent.
  EXPECT_TRUE(store.CheckAndRecord("other", Statement("other", 1)).ok());
  // Another key has its own file and its own versions.
  SeenNamesStore other(dir_, SeenNamesKind::kAccepted, std::string(64, 'e'));
  EXPECT_EQ(other.Lookup("n")->version, 0u);
  EXPECT_TRUE(other.CheckAndRecord("n", Statement("n", 1)).ok());
  EXPECT_EQ(store.Lookup("n")->version, 5u);
  // So does what a publisher signed with the same key.
  SeenNamesStore signed_names(dir_, SeenNamesKind::kSigned, key_id_);
  EXPECT_NE(signed_names.path(), store.path());
  EXPECT_EQ(signed_names.Lookup("n")->version, 0u);
}

TEST_F(SeenNamesTest, StateDirectoryIsPrivate) {
  SeenNamesStore store(dir_, SeenNamesKind::kAccepted, key_id_);
  ASSERT_TRUE(store.CheckAndRecord("n", Statement("n", 1)).ok());
  struct stat st;
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// A state directory others can write into could hold any record; a lock
// file planted as a symlink is not followed.
TEST_F(SeenNamesTest, StateDirectoryMustBeOwnAndLocksNoSymlink) {
  SeenNamesStore store(dir_, SeenNamesKind::kAccepted, key_id_);
  ASSERT_TRUE(store.CheckAndRecord("n", Statement("n", 1)).ok());
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  EXPECT_EQ(store.CheckAndRecord("n", Statement("n", 2)).code(),
            absl::StatusCode::kFailedPrecondition);
  const absl::Status looked = store.Lookup("n").status();
  EXPECT_EQ(looked.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(looked.message().find("writable by group or others"),
            absl::string_view::npos)
      << looked;
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  const std::string lock =
      store.path().substr(0, store.path().size() - 5) + ".lock";
  ASSERT_EQ(unlink(lock.c_str()), 0);
  const std::string elsewhere = dir_ + "-elsewhere";
  ASSERT_EQ(symlink(elsewhere.c_str(), lock.c_str()), 0);
  EXPECT_EQ(store.CheckAndRecord("n", Statement("n", 2)).code(),
            absl::StatusCode::kFailedPrecondition);
  struct stat st;
  EXPECT_NE(lstat(elsewhere.c_str(), &st), 0);  // nothing made through it
}

TEST_F(SeenNamesTest, DamagedFileIsAnErrorAndIsKept) {
  SeenNamesStore store(dir_, SeenNamesKind::kAccepted, key_id_);
  ASSERT_TRUE(store.CheckAndRecord("n", Statement("n", 3)).ok());
  std::string text = *ReadSmallFile(store.path(), 1 << 20);
  text[text.find(" n\n") - 1] ^= 1;  // inside the record's hash
  ASSERT_TRUE(ReplaceFileDurably(store.path() + ".x", store.path(), text).ok());
  const absl::Status status = store.CheckAndRecord("n", Statement("n", 1));
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_NE(status.message().find("damaged"), absl::string_view::npos);
  EXPECT_EQ(store.CheckAndRecord("m", Statement("m", 1)).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(store.Lookup("n").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(*ReadSmallFile(store.path(), 1 << 20), text);
  // A file of another root under this root's name is damage too.
  const std::string foreign = *FormatSeenNames(SeenNames{"0123", {}});
  ASSERT_TRUE(
      ReplaceFileDurably(store.path() + ".x", store.path(), foreign).ok());
  EXPECT_EQ(store.Lookup("n").status().code(), absl::StatusCode::kDataLoss);
}

// Each worker records versions 1..kVersions of a shared name in its own
// order, and its own name once: afterwards the shared name is at the top
// and no worker's record was lost; no worker ever saw the version go down.
constexpr int kVersions = 8;

// Returns the number of failures.
int RunWorker(const SeenNamesStore& store,
              const std::vector<NameStatement>& shared,
              const NameStatement& own, int seed) {
  int failures = 0;
  uint64_t high = 0;
  for (int i = 0; i < kVersions; ++i) {
    const NameStatement& next = shared[(i * 3 + seed) % kVersions];
    const absl::Status status = store.CheckAndRecord("shared", next);
    if (!status.ok() && !absl::IsFailedPrecondition(status)) ++failures;
    if (status.ok()) high = std::max(high, next.claim.version);
    const absl::StatusOr<SeenName> seen = store.Lookup("shared");
    if (!seen.ok() || seen->version < high) ++failures;
    if (seen.ok()) high = seen->version;
  }
  if (!store.CheckAndRecord(own.claim.name, own).ok()) ++failures;
  return failures;
}

TEST_F(SeenNamesTest, ConcurrentThreadsAndProcessesLoseNothing) {
  constexpr int kProcesses = 3;
  constexpr int kThreads = 3;
  std::vector<NameStatement> shared;
  for (int v = 1; v <= kVersions; ++v) shared.push_back(Statement("shared", v));
  std::vector<NameStatement> own;
  for (int w = 0; w < kProcesses * kThreads; ++w) {
    own.push_back(Statement(absl::StrCat("worker/", w), 1));
  }
  const SeenNamesStore store(dir_, SeenNamesKind::kAccepted, key_id_);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::vector<std::thread> threads;
      std::vector<int> failures(kThreads, 0);
      for (int t = 0; t < kThreads; ++t) {
        const int w = p * kThreads + t;
        threads.emplace_back(
            [&, w, t] { failures[t] = RunWorker(store, shared, own[w], w); });
      }
      int total = 0;
      for (int t = 0; t < kThreads; ++t) {
        threads[t].join();
        total += failures[t];
      }
      _exit(total == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(store.Lookup("shared")->version, static_cast<uint64_t>(kVersions));
  for (const NameStatement& statement : own) {
    EXPECT_EQ(store.Lookup(statement.claim.name)->version, 1u)
        << statement.claim.name;
  }
}

}  // namespace
}  // namespace verity::client
