// Implements the store cases for name statements and fs-verity signatures.

#include "server/store/testing/name_write_cases.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/trust/name_statement.h"

namespace verity::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

NameWrite Named(std::string name, std::string statement = "") {
  return NameWrite{std::move(name), std::move(statement), nullptr};
}

// The version a test statement holds: its decimal text; 0 for none.
uint64_t VersionOf(absl::string_view statement) {
  uint64_t version = 0;
  if (!statement.empty()) {
    EXPECT_TRUE(absl::SimpleAtoi(statement, &version));
  }
  return version;
}

}  // namespace

absl::StatusOr<PutResult> PutWith(Store& store, const TestBlob& blob,
                                  PutCommit commit) {
  commit.expected = blob.digest;
  absl::StatusOr<std::unique_ptr<PutWriter>> writer =
      store.BeginPut(MerkleParams{}, blob.digest);
  if (!writer.ok()) return writer.status();
  absl::Status appended = (*writer)->Append(AsBytes(blob.data));
  if (!appended.ok()) return appended;
  return (*writer)->Commit(commit);
}

void ExpectStatementsGoWithNames(Store& store) {
  const TestBlob a = MakeRandomTestBlob(5000, MerkleParams{}, 11);
  const TestBlob b = MakeRandomTestBlob(7000, MerkleParams{}, 12);
  const std::string statement_1("one\0with NUL\n", 13);
  absl::StatusOr<PutResult> put =
      PutWith(store, a, PutCommit{{}, Named("n", statement_1), ""});
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->info.name_statement, statement_1);
  absl::StatusOr<NamedBlob> named = store.LookupName("n");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->digest, a.digest);
  EXPECT_EQ(named->statement, statement_1);

  // Re-pointed by SetName: the statement is replaced with the name.
  ASSERT_TRUE(PutWith(store, b, PutCommit{}).ok());
  absl::StatusOr<BlobInfo> set = store.SetName(b.digest, Named("n", "two"));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->digest, b.digest_text);
  EXPECT_EQ(set->name_statement, "two");
  EXPECT_THAT(set->names, ElementsAre("n"));
  EXPECT_EQ(store.LookupName("n")->statement, "two");
  EXPECT_EQ(store.LookupName("n")->digest, b.digest);
  EXPECT_THAT(store.Stat(a.digest)->names, IsEmpty());

  // A logged statement keeps its log index with it, in the name and its
  // history, until the name is written again.
  NameWrite logged = Named("n", "two, logged");
  logged.log_index = 1234567;
  ASSERT_TRUE(store.SetName(b.digest, logged).ok());
  EXPECT_EQ(store.LookupName("n")->log_index, 1234567u);
  EXPECT_EQ(store.LookupName("n")->statement, "two, logged");
  absl::StatusOr<NameHistory> history = store.History("n");
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(history->versions[0].log_index, 1234567u);

  // Re-pointed without one: none.
  ASSERT_TRUE(store.SetName(a.digest, Named("n")).ok());
  EXPECT_EQ(store.LookupName("n")->statement, "");
  EXPECT_EQ(store.LookupName("n")->log_index, std::nullopt);
  EXPECT_EQ(store.LookupName("n")->digest, a.digest);

  // Deleted with the name, and with the blob.
  ASSERT_TRUE(store.SetName(a.digest, Named("n", "three")).ok());
  ASSERT_TRUE(store.DeleteName("n").ok());
  EXPECT_TRUE(absl::IsNotFound(store.LookupName("n").status()));
  ASSERT_TRUE(store.SetName(a.digest, Named("n", "four")).ok());
  ASSERT_TRUE(store.DeleteBlob(a.digest).ok());
  EXPECT_TRUE(absl::IsNotFound(store.LookupName("n").status()));
  ASSERT_TRUE(store.SetName(b.digest, Named("n")).ok());
  EXPECT_EQ(store.LookupName("n")->statement, "");

  // Nothing to name, or a bad request.
  EXPECT_TRUE(absl::IsNotFound(store.SetName(a.digest, Named("m")).status()));
  EXPECT_TRUE(absl::IsNotFound(store.LookupName("m").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(store.SetName(b.digest, Named("../m")).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      store
          .SetName(b.digest,
                   Named("m", std::string(kMaxNameStatementSize + 1, 's')))
          .status()));
  EXPECT_TRUE(absl::IsNotFound(store.LookupName("m").status()));
}

void ExpectARefusedNameWriteChangesNothing(Store& store) {
  const TestBlob a = MakeRandomTestBlob(5000, MerkleParams{}, 21);
  const TestBlob b = MakeRandomTestBlob(6000, MerkleParams{}, 22);
  ASSERT_TRUE(PutWith(store, a, PutCommit{{}, Named("n", "1"), ""}).ok());
  int checks = 0;
  NameWrite refused = Named("n", "2");
  refused.check = [&](const ParsedDigest& digest, absl::string_view current) {
    ++checks;
    EXPECT_EQ(digest, b.digest);
    EXPECT_EQ(current, "1");
    return absl::FailedPreconditionError("refused");
  };
  const absl::StatusOr<PutResult> put =
      PutWith(store, b, PutCommit{{}, refused, ""});
  EXPECT_EQ(put.status(), absl::FailedPreconditionError("refused"));
  EXPECT_EQ(checks, 1);
  // The blob stays stored; the name does not move.
  EXPECT_TRUE(store.Stat(b.digest).ok());
  EXPECT_EQ(store.LookupName("n")->digest, a.digest);
  EXPECT_EQ(store.LookupName("n")->statement, "1");

  EXPECT_EQ(store.SetName(b.digest, refused).status(),
            absl::FailedPreconditionError("refused"));
  EXPECT_EQ(checks, 2);
  EXPECT_EQ(store.LookupName("n")->digest, a.digest);
  EXPECT_EQ(store.LookupName("n")->statement, "1");
  EXPECT_THAT(store.Stat(b.digest)->names, IsEmpty());

  // A new name: the check sees no statement.
  NameWrite fresh = Named("fresh", "1");
  fresh.check = [&](const ParsedDigest&, absl::string_view current) {
    EXPECT_EQ(current, "");
    return absl::OkStatus();
  };
  ASSERT_TRUE(store.SetName(b.digest, fresh).ok());
  EXPECT_EQ(store.LookupName("fresh")->statement, "1");
}

void ExpectSignaturesGoWithBlobs(Store& store) {
  const TestBlob a = MakeRandomTestBlob(9000, MerkleParams{}, 31);
  const std::string first(300, '\x30');
  absl::StatusOr<PutResult> put = PutWith(store, a, PutCommit{{}, {}, first});
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->info.fsverity_signature, first);
  EXPECT_EQ(store.Stat(a.digest)->fsverity_signature, first);
  EXPECT_EQ((*store.OpenBlob(a.digest))->fsverity_signature(), first);

  // A later Put with one replaces it; one without keeps it.
  const std::string second = "second\0signature";
  put = PutWith(store, a, PutCommit{{}, {}, second});
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_TRUE(put->already_present);
  EXPECT_EQ(put->info.fsverity_signature, second);
  EXPECT_EQ(store.Stat(a.digest)->fsverity_signature, second);
  EXPECT_EQ((*store.OpenBlob(a.digest))->fsverity_signature(), second);
  ASSERT_TRUE(PutWith(store, a, PutCommit{}).ok());
  EXPECT_EQ(store.Stat(a.digest)->fsverity_signature, second);
  const std::string largest(kMaxFsveritySignatureSize, '\xff');
  ASSERT_TRUE(PutWith(store, a, PutCommit{{}, {}, largest}).ok());
  EXPECT_EQ(store.Stat(a.digest)->fsverity_signature, largest);

  // Deleted with the blob: stored again without one, it has none.
  ASSERT_TRUE(store.DeleteBlob(a.digest).ok());
  ASSERT_TRUE(PutWith(store, a, PutCommit{}).ok());
  EXPECT_EQ(store.Stat(a.digest)->fsverity_signature, "");
  EXPECT_EQ((*store.OpenBlob(a.digest))->fsverity_signature(), "");
  EXPECT_TRUE(absl::IsInvalidArgument(
      PutWith(
          store, a,
          PutCommit{{}, {}, std::string(kMaxFsveritySignatureSize + 1, 's')})
          .status()));
  EXPECT_EQ(store.Stat(a.digest)->fsverity_signature, "");
}

void ExpectTreeManifestMarksGoWithBlobs(Store& store) {
  const TestBlob tree = MakeRandomTestBlob(700, MerkleParams{}, 51);
  const TestBlob file = MakeRandomTestBlob(800, MerkleParams{}, 52);
  PutCommit as_tree;
  as_tree.tree_manifest = true;
  absl::StatusOr<PutResult> put = PutWith(store, tree, as_tree);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_TRUE(put->info.tree_manifest);
  EXPECT_TRUE(store.Stat(tree.digest)->tree_manifest);
  ASSERT_TRUE(PutWith(store, file, PutCommit{}).ok());
  EXPECT_FALSE(store.Stat(file.digest)->tree_manifest);
  // Stored before as a file, then put as a tree: marked.
  put = PutWith(store, file, as_tree);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_TRUE(put->already_present);
  EXPECT_TRUE(put->info.tree_manifest);
  EXPECT_TRUE(store.Stat(file.digest)->tree_manifest);
  // A Put without the flag leaves the mark.
  ASSERT_TRUE(PutWith(store, tree, PutCommit{}).ok());
  EXPECT_TRUE(store.Stat(tree.digest)->tree_manifest);
  // Deleted with the blob.
  ASSERT_TRUE(store.DeleteBlob(tree.digest).ok());
  ASSERT_TRUE(PutWith(store, tree, PutCommit{}).ok());
  EXPECT_FALSE(store.Stat(tree.digest)->tree_manifest);
}

void ExpectNamesKeepTheirHistory(Store& store, int keep) {
  std::vector<TestBlob> blobs;
  for (int i = 0; i < keep + 2; ++i) {
    blobs.push_back(MakeRandomTestBlob(1000 + i, MerkleParams{}, 40 + i));
    ASSERT_TRUE(PutWith(store, blobs.back(), PutCommit{}).ok());
  }
  const absl::Time start = absl::Now() - absl::Seconds(1);
  ASSERT_TRUE(
      PutWith(store, blobs[0], PutCommit{{}, Named("rel", "s0"), ""}).ok());
  absl::StatusOr<NameHistory> history = store.History("rel");
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(history->name, "rel");
  ASSERT_EQ(history->versions.size(), 1u);
  EXPECT_EQ(history->versions[0].digest, blobs[0].digest);
  EXPECT_EQ(history->versions[0].statement, "s0");
  EXPECT_GE(history->versions[0].written, start);
  EXPECT_LE(history->versions[0].written, absl::Now());
  // The same version again: nothing added.
  ASSERT_TRUE(store.SetName(blobs[0].digest, Named("rel", "s0")).ok());
  EXPECT_EQ(store.History("rel")->versions.size(), 1u);

  for (int i = 1; i < keep + 2; ++i) {
    ASSERT_TRUE(
        store.SetName(blobs[i].digest, Named("rel", absl::StrCat("s", i)))
            .ok());
  }
  history = store.History("rel");
  ASSERT_TRUE(history.ok()) << history.status();
  ASSERT_EQ(history->versions.size(), static_cast<size_t>(keep));
  for (int k = 0; k < keep; ++k) {
    const int i = keep + 1 - k;  // newest first
    EXPECT_EQ(history->versions[k].digest, blobs[i].digest) << k;
    EXPECT_EQ(history->versions[k].statement, absl::StrCat("s", i)) << k;
  }
  // Back to an older release: a new version at the front.
  ASSERT_TRUE(store.SetName(blobs[2].digest, Named("rel", "back")).ok());
  history = store.History("rel");
  EXPECT_EQ(history->versions[0].digest, blobs[2].digest);
  EXPECT_EQ(history->versions[0].statement, "back");
  EXPECT_EQ(history->versions[1].digest, blobs[keep + 1].digest);
  EXPECT_EQ(store.LookupName("rel")->statement, "back");

  ASSERT_TRUE(store.DeleteName("rel").ok());
  EXPECT_TRUE(absl::IsNotFound(store.History("rel").status()));
  ASSERT_TRUE(store.SetName(blobs[1].digest, Named("rel")).ok());
  EXPECT_EQ(store.History("rel")->versions.size(), 1u);
  EXPECT_TRUE(absl::IsNotFound(store.History("other").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(store.History("../x").status()));
}

void ExpectListNamesFindsEveryName(Store& store) {
  const TestBlob a = MakeRandomTestBlob(3000, MerkleParams{}, 61);
  const TestBlob b = MakeRandomTestBlob(3001, MerkleParams{}, 62);
  ASSERT_TRUE(PutWith(store, a, PutCommit{}).ok());
  ASSERT_TRUE(PutWith(store, b, PutCommit{}).ok());
  std::vector<std::string> written;
  for (int i = 0; i < 7; ++i) {
    written.push_back(absl::StrCat("dir/name", i));
    ASSERT_TRUE(store.SetName(a.digest, Named(written.back())).ok());
    ASSERT_TRUE(store.SetName(b.digest, Named(written.back())).ok());
  }
  std::vector<std::string> listed;
  std::string after;
  int pages = 0;
  do {
    absl::StatusOr<NamePage> page = store.ListNames(after, 3);
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_LE(page->names.size(), 3u);
    for (const NameHistory& history : page->names) {
      listed.push_back(history.name);
      ASSERT_EQ(history.versions.size(), 2u) << history.name;
      EXPECT_EQ(history.versions[0].digest, b.digest);
      EXPECT_EQ(history.versions[1].digest, a.digest);
    }
    after = page->next;
    ASSERT_LT(++pages, 10);
  } while (!after.empty());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, written);
}

void ExpectNameWritesAreCompareAndSet(const std::vector<Store*>& writers) {
  const TestBlob blob = MakeRandomTestBlob(3000, MerkleParams{}, 41);
  ASSERT_TRUE(PutWith(*writers[0], blob, PutCommit{}).ok());
  constexpr int kThreads = 8;
  constexpr uint64_t kVersions = 64;
  std::vector<uint64_t> versions(kVersions);
  for (uint64_t v = 0; v < kVersions; ++v) versions[v] = v + 1;
  std::shuffle(versions.begin(), versions.end(), std::mt19937(7));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Store& store = *writers[t % writers.size()];
      for (size_t i = t; i < versions.size(); i += kThreads) {
        NameWrite write = Named("raced", absl::StrCat(versions[i]));
        write.check = [&](const ParsedDigest&, absl::string_view current) {
          // Widens the window between the compare and the set, which a
          // store that does not hold the name still would lose.
          absl::SleepFor(absl::Milliseconds(1));
          if (versions[i] > VersionOf(current)) return absl::OkStatus();
          return absl::FailedPreconditionError("stale");
        };
        const absl::Status set = store.SetName(blob.digest, write).status();
        EXPECT_TRUE(set.ok() || absl::IsFailedPrecondition(set)) << set;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  // Had two writers both passed their checks against the same statement,
  // the lower one could have landed last.
  EXPECT_EQ(writers[0]->LookupName("raced")->statement,
            absl::StrCat(kVersions));
  // And the history holds the writes that landed, each above the one before.
  const absl::StatusOr<NameHistory> history = writers[0]->History("raced");
  ASSERT_TRUE(history.ok()) << history.status();
  for (size_t k = 1; k < history->versions.size(); ++k) {
    EXPECT_GT(VersionOf(history->versions[k - 1].statement),
              VersionOf(history->versions[k].statement));
  }
}

}  // namespace verity::server
