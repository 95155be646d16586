// Garbage collection on the file store and the S3 store (over FakeS3): what
// no root reaches and nobody used within the grace goes, and nothing else;
// quarantined blobs go a grace after their quarantine unless a root reaches
// them; a dry run deletes nothing; one collection holds the lease at a time; a
// write that makes blobs reachable is refused while a sweep may delete them.

#include "server/upkeep/collector.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/tree_manifest.h"
#include "server/store/forwarding_store.h"
#include "server/upkeep/lease.h"
#include "server/upkeep/testing/upkeep_stores.h"

namespace verity::server {
namespace {

class CollectorTest : public UpkeepTest {
 protected:
  void SetUp() override { Open(2); }

  absl::StatusOr<CollectReport> CollectAt(absl::Time now,
                                          bool dry_run = false) {
    CollectOptions options;
    options.grace = absl::Hours(1);
    options.dry_run = dry_run;
    options.holder = "test";
    return Collect(
        *store_,
        [this](absl::Span<const ParsedDigest> blobs, absl::Time cutoff) {
          return store_->DeleteUnusedSince(blobs, cutoff);
        },
        options, now);
  }
};

TEST_P(CollectorTest, FreesWhatOnlyOldReleasesReached) {
  // Three releases of one tree; the name keeps two.
  const TestBlob shared = Put("in every release");
  std::vector<TestBlob> own, trees;
  for (int i = 0; i < 3; ++i) {
    own.push_back(Put(absl::StrCat("only in release ", i)));
    trees.push_back(PutTree({{"own", own.back()}, {"shared", shared}}));
    Name("app/release", trees.back());
  }
  const TestBlob loose = Put("named by nothing");
  const absl::Time later = absl::Now() + absl::Hours(2);

  absl::StatusOr<CollectReport> dry = CollectAt(later, /*dry_run=*/true);
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_EQ(dry->freed, 3u);  // release 0's tree and file, and `loose`
  EXPECT_TRUE(Stored(trees[0]) && Stored(own[0]) && Stored(loose));

  absl::StatusOr<CollectReport> report = CollectAt(later);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->blobs, 8u);
  EXPECT_EQ(report->reachable, 5u);
  EXPECT_EQ(report->freed, 3u);
  EXPECT_EQ(report->freed_bytes,
            trees[0].data.size() + own[0].data.size() + loose.data.size());
  EXPECT_EQ(report->names, 1u);
  EXPECT_EQ(report->trees, 2u);
  EXPECT_FALSE(Stored(trees[0]) || Stored(own[0]) || Stored(loose));
  for (int i = 1; i < 3; ++i) {
    EXPECT_TRUE(Stored(trees[i]) && Stored(own[i])) << i;
  }
  EXPECT_TRUE(Stored(shared));
  // Nothing more to free.
  EXPECT_EQ(CollectAt(later)->freed, 0u);
}

TEST_P(CollectorTest, KeepsWhatWasUsedWithinTheGrace) {
  const TestBlob fresh = Put("stored just now");
  const TestBlob touched = Put("told present later");
  // Within the grace of a collection now.
  absl::StatusOr<CollectReport> report = CollectAt(absl::Now());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->young, 2u);
  EXPECT_TRUE(Stored(fresh) && Stored(touched));
  // Used an hour on (FindMissing), collected two hours on.
  const absl::Time later = absl::Now() + absl::Hours(2);
  const absl::StatusOr<absl::Time> before = store_->MarkUsed(
      touched.digest, later - absl::Minutes(30), absl::Minutes(30));
  ASSERT_TRUE(before.ok()) << before.status();
  report = CollectAt(later);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->freed, 1u);
  EXPECT_FALSE(Stored(fresh));
  EXPECT_TRUE(Stored(touched));
}

TEST_P(CollectorTest, FreesQuarantinedBlobsOnceTheGraceHasPassed) {
  const TestBlob old = Put("found corrupt");
  const TestBlob kept = Put("stored");
  ASSERT_TRUE(store_->Quarantine(old.digest, "test").ok());
  absl::StatusOr<std::vector<ParsedDigest>> listed =
      store_->ListQuarantined("", 10);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0], old.digest);
  // Within the grace of its quarantine: kept, for a look or a new Put.
  absl::StatusOr<CollectReport> report = CollectAt(absl::Now());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->quarantined, 1u);
  EXPECT_EQ(report->quarantined_freed, 0u);
  // Past it: gone.
  Name("app/other", kept);
  const absl::Time later = absl::Now() + absl::Hours(2);
  report = CollectAt(later, /*dry_run=*/true);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->quarantined_freed, 1u);
  report = CollectAt(later);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->quarantined_freed, 1u);
  EXPECT_TRUE(absl::IsNotFound(store_->LastUsed(old.digest).status()));
  listed = store_->ListQuarantined("", 10);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_TRUE(listed->empty());
}

TEST_P(CollectorTest, ANameOnAQuarantinedBlobStopsTheCollection) {
  // What it reaches cannot be read (it may be a tree): nothing is swept
  // until the blob is put again or the name goes.
  const TestBlob named = Put("found corrupt, named");
  Name("app/model", named);
  ASSERT_TRUE(store_->Quarantine(named.digest, "test").ok());
  const absl::StatusOr<CollectReport> report =
      CollectAt(absl::Now() + absl::Hours(2));
  EXPECT_TRUE(absl::IsDataLoss(report.status())) << report.status();
  EXPECT_NE(report.status().message().find("app/model"), std::string::npos)
      << report.status();
  ASSERT_TRUE(store_->DeleteName("app/model").ok());
  EXPECT_EQ(CollectAt(absl::Now() + absl::Hours(2))->quarantined_freed, 1u);
}

TEST_P(CollectorTest, OneCollectionHoldsTheLeaseAtATime) {
  const absl::Time now = absl::Now();
  absl::StatusOr<StoreLease> held =
      StoreLease::Acquire(*store_, kCollectorLease, "replica-2",
                          now - absl::Hours(1), now, absl::Minutes(2));
  ASSERT_TRUE(held.ok()) << held.status();
  absl::StatusOr<CollectReport> report = CollectAt(now);
  EXPECT_TRUE(absl::IsAborted(report.status())) << report.status();
  EXPECT_NE(report.status().message().find("replica-2"), std::string::npos);
  // A dry run takes no lease.
  EXPECT_TRUE(CollectAt(now, /*dry_run=*/true).ok());
  // Its own holder takes it back (a restart of the replica that held it).
  CollectOptions same;
  same.holder = "replica-2";
  EXPECT_TRUE(
      Collect(
          *store_,
          [this](absl::Span<const ParsedDigest> blobs, absl::Time cutoff) {
            return store_->DeleteUnusedSince(blobs, cutoff);
          },
          same, now)
          .ok());
  held = StoreLease::Acquire(*store_, kCollectorLease, "replica-2",
                             now - absl::Hours(1), now, absl::Minutes(2));
  ASSERT_TRUE(held.ok()) << held.status();
  // Expired: taken over, and the old holder can no longer renew.
  EXPECT_TRUE(CollectAt(now + absl::Minutes(3)).ok());
  EXPECT_TRUE(absl::IsAborted(held->Renew(now + absl::Minutes(4))));
}

// A store whose first lease write finds that "replica-2" took the lease
// since the lease was read, and let it go again if `released`.
class RacedStore : public ForwardingStore {
 public:
  RacedStore(Store& inner, bool released)
      : ForwardingStore(inner), released_(released) {}

  absl::StatusOr<SharedRecord> WriteRecord(
      absl::string_view key, absl::string_view body,
      const std::optional<std::string>& expected) override {
    if (!raced_) {
      raced_ = true;
      const absl::Time now = absl::Now();
      ASSIGN_OR_RETURN(
          StoreLease winner,
          StoreLease::Acquire(inner(), kCollectorLease, "replica-2", now, now,
                              absl::Minutes(2)));
      if (released_) winner.Release();
    }
    return inner().WriteRecord(key, body, expected);
  }

 private:
  const bool released_;
  bool raced_ = false;
};

TEST_P(CollectorTest, ALeaseLostToARaceNamesTheWinnerOrIsTriedAgain) {
  const absl::Time now = absl::Now();
  RacedStore held(*store_, /*released=*/false);
  const absl::StatusOr<StoreLease> lost = StoreLease::Acquire(
      held, kCollectorLease, "test", now, now, absl::Minutes(2));
  EXPECT_TRUE(absl::IsAborted(lost.status())) << lost.status();
  EXPECT_NE(lost.status().message().find("by replica-2 holds the store"),
            std::string::npos)
      << lost.status();

  Open(2);  // a new store, no lease
  RacedStore released(*store_, /*released=*/true);
  const absl::StatusOr<StoreLease> won = StoreLease::Acquire(
      released, kCollectorLease, "test", now, now, absl::Minutes(2));
  ASSERT_TRUE(won.ok()) << won.status();
  EXPECT_EQ(won->terms().holder, "test");
}

TEST_P(CollectorTest, AWriteIsRefusedWhileASweepMayDeleteItsBlobs) {
  const TestBlob blob = Put("about to be named");
  const absl::Time now = absl::Now();
  ASSERT_TRUE(
      CheckNotSwept(*store_, {{blob.digest, now - absl::Hours(2)}}, now).ok());
  absl::StatusOr<StoreLease> lease =
      StoreLease::Acquire(*store_, kCollectorLease, "collector",
                          now - absl::Hours(1), now, absl::Minutes(2));
  ASSERT_TRUE(lease.ok()) << lease.status();
  const absl::Status refused =
      CheckNotSwept(*store_, {{blob.digest, now - absl::Hours(2)}}, now);
  EXPECT_TRUE(absl::IsUnavailable(refused)) << refused;
  EXPECT_TRUE(
      CheckNotSwept(*store_, {{blob.digest, now - absl::Minutes(30)}}, now)
          .ok());
  lease->Release();
  EXPECT_TRUE(CheckNotSwept(*store_, {{blob.digest, now - absl::Hours(2)}},
                            now + absl::Seconds(1))
                  .ok());
}

TEST(LeaseTest, RoundTripsAndRefusesMalformed) {
  const LeaseTerms terms{"host:1", absl::FromUnixSeconds(200),
                         absl::FromUnixSeconds(100)};
  const absl::StatusOr<LeaseTerms> decoded = DecodeLease(EncodeLease(terms));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->holder, "host:1");
  EXPECT_EQ(decoded->expires, terms.expires);
  EXPECT_EQ(decoded->cutoff, terms.cutoff);
  for (const char* body :
       {"", "holder x\nexpires 1\n", "holder x\nexpires a\ncutoff 1\n",
        "holder x\nexpires 1\ncutoff 1\nmore\n"}) {
    EXPECT_TRUE(absl::IsDataLoss(DecodeLease(body).status())) << body;
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, CollectorTest,
                         ::testing::Values(StoreFactory(NewTestFileStore),
                                           StoreFactory(NewTestS3Store)));

}  // namespace
}  // namespace verity::server
