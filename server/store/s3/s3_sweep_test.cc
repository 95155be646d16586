// Garbage collection's sweep on the S3 store, over FakeS3: the page of stored
// blobs from the listing alone, the batch delete that leaves nothing of a
// blob behind, the leftovers of Puts and deletes cut short, and the requests
// each takes.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "server/store/s3/s3_client.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/s3/s3_store.h"
#include "server/store/s3/testing/fake_s3.h"
#include "server/store/s3/testing/fake_s3_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/testing/name_write_cases.h"

namespace verity::server {
namespace {

class S3SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<S3Store>> store =
        S3Store::Open(FakeS3StoreOptions(counting_));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  // A blob of `size` bytes, put and timed now.
  TestBlob Put(uint32_t seed, size_t size = 3000) {
    TestBlob blob = MakeRandomTestBlob(size, MerkleParams{}, seed);
    EXPECT_TRUE(PutWith(*store_, blob, PutCommit{}).ok());
    EXPECT_TRUE(store_->LastUsed(blob.digest).ok());
    return blob;
  }

  // `blob` put by `store` with its size, as one record.
  static absl::StatusOr<PutResult> PutRecord(Store& store,
                                             const TestBlob& blob) {
    absl::StatusOr<std::unique_ptr<PutWriter>> writer =
        store.BeginPut(MerkleParams{}, blob.digest, blob.data.size());
    if (!writer.ok()) return writer.status();
    const absl::Status appended = (*writer)->Append(AsBytes(blob.data));
    if (!appended.ok()) return appended;
    PutCommit commit;
    commit.expected = blob.digest;
    return (*writer)->Commit(commit);
  }

  // Writes or deletes an object behind the store's back.
  void Raw(const std::string& method, const std::string& key,
           std::string body = "x") {
    S3Request request;
    request.op = "Raw";
    request.method = method;
    request.key = key;
    request.body = std::move(body);
    ASSERT_TRUE(raw_->Call(std::move(request)).status.ok());
  }

  static std::string TwoHoursAgo() {
    return absl::StrCat(absl::ToUnixSeconds(absl::Now() - absl::Hours(2)));
  }

  // Runs `hook` before each of the store's requests (nullptr: none).
  void OnRequest(std::function<void(const S3Request&)> hook) {
    absl::MutexLock lock(&counting_->mu);
    counting_->before = std::move(hook);
  }

  // Another replica over the same bucket.
  std::unique_ptr<S3Store> Replica() {
    absl::StatusOr<std::unique_ptr<S3Store>> replica =
        S3Store::Open(FakeS3StoreOptions(s3_));
    EXPECT_TRUE(replica.ok()) << replica.status();
    return replica.ok() ? *std::move(replica) : nullptr;
  }

  // Before the store's first request `op` (of `key`, unless empty): the
  // replica's use of `digest` at `when` (as a FindMissing of it), its
  // status into `use`.
  void UseBefore(std::string op, std::string key, S3Store& replica,
                 const ParsedDigest& digest, absl::Time when,
                 absl::Status* use) {
    *use = absl::UnknownError("not run");
    OnRequest([=, &replica](const S3Request& request) {
      if (request.op != op || (!key.empty() && request.key != key) ||
          !absl::IsUnknown(*use)) {
        return;
      }
      *use = replica.MarkUsed(digest, when, absl::ZeroDuration()).status();
    });
  }

  std::map<std::string, int> TakeOps() {
    absl::MutexLock lock(&counting_->mu);
    std::map<std::string, int> ops(counting_->ops.begin(),
                                   counting_->ops.end());
    counting_->ops.clear();
    return ops;
  }

  std::vector<LeftoverPage> SweepLeftovers(absl::Time cutoff, bool dry_run) {
    std::vector<LeftoverPage> pages;
    std::string after;
    do {
      absl::StatusOr<LeftoverPage> page =
          store_->SweepLeftovers(after, cutoff, dry_run);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      pages.push_back(*page);
      after = page->next;
    } while (!after.empty());
    return pages;
  }

  const S3Layout layout_{"p/"};
  std::shared_ptr<FakeS3> s3_ = std::make_shared<FakeS3>();
  std::shared_ptr<CountingTransport> counting_ =
      std::make_shared<CountingTransport>(s3_);
  std::unique_ptr<S3Client> raw_ =
      S3Client::WithTransport(FakeS3StoreOptions(s3_).client, s3_);
  std::unique_ptr<S3Store> store_;
};

size_t Objects(const std::vector<LeftoverPage>& pages) {
  size_t objects = 0;
  for (const LeftoverPage& page : pages) objects += page.objects;
  return objects;
}

TEST_F(S3SweepTest, ListStoredReadsTheListingAlone) {
  std::vector<TestBlob> blobs;
  for (uint32_t i = 0; i < 5; ++i) blobs.push_back(Put(i, 1000 + 100 * i));
  ASSERT_TRUE(store_->Quarantine(blobs[2].digest, "test").ok());
  TakeOps();

  absl::StatusOr<std::vector<StoredBlob>> all = store_->ListStored("", 1000);
  ASSERT_TRUE(all.ok()) << all.status();
  // The quarantine's listing and the blobs': nothing for each blob.
  EXPECT_EQ(TakeOps(), (std::map<std::string, int>{{"ListObjectsV2", 2}}));
  absl::StatusOr<std::vector<BlobInfo>> infos = store_->List("", 1000);
  ASSERT_TRUE(infos.ok()) << infos.status();
  ASSERT_EQ(all->size(), 4u);
  ASSERT_EQ(infos->size(), 4u);
  for (size_t i = 0; i < all->size(); ++i) {
    EXPECT_EQ((*all)[i].digest.ToString(), (*infos)[i].digest);
    EXPECT_EQ((*all)[i].data_size, (*infos)[i].descriptor.data_size);
  }
  // A page at a time finds the same.
  absl::StatusOr<std::vector<StoredBlob>> first = store_->ListStored("", 2);
  ASSERT_TRUE(first.ok() && first->size() == 2u);
  absl::StatusOr<std::vector<StoredBlob>> rest =
      store_->ListStored(first->back().digest.ToString(), 2);
  ASSERT_TRUE(rest.ok() && rest->size() == 2u);
  EXPECT_EQ((*rest)[0].digest, (*all)[2].digest);
  EXPECT_EQ((*rest)[1].digest, (*all)[3].digest);
}

TEST_F(S3SweepTest, DeleteUnusedSinceLeavesNothingOfTheOld) {
  std::vector<TestBlob> blobs;
  for (uint32_t i = 0; i < 6; ++i) blobs.push_back(Put(10 + i));
  // A name that has moved on leaves its hint under the blob it left.
  ASSERT_TRUE(store_->SetName(blobs[0].digest, NameWrite{"n", "", {}}).ok());
  ASSERT_TRUE(store_->SetName(blobs[1].digest, NameWrite{"n", "", {}}).ok());
  ASSERT_TRUE(store_->Quarantine(blobs[3].digest, "test").ok());
  const absl::Time cutoff = absl::Now() + absl::Hours(1);
  // Used after the cutoff: kept.
  ASSERT_TRUE(store_
                  ->MarkUsed(blobs[5].digest, cutoff + absl::Hours(1),
                             absl::ZeroDuration())
                  .ok());
  std::vector<ParsedDigest> doomed;
  for (const TestBlob& blob :
       {blobs[4], blobs[0], blobs[2], blobs[3], blobs[5]}) {
    doomed.push_back(blob.digest);
  }
  TakeOps();

  absl::StatusOr<std::vector<ParsedDigest>> deleted =
      store_->DeleteUnusedSince(doomed, cutoff);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted,
            std::vector<ParsedDigest>(doomed.begin(), doomed.end() - 1));
  // A GET of each time, a conditional PUT marking each doomed, one listing
  // of their objects, four DeleteObjects.
  EXPECT_EQ(TakeOps(), (std::map<std::string, int>{{"GetUsed", 5},
                                                   {"MarkDoomed", 4},
                                                   {"ListObjectsV2", 1},
                                                   {"DeleteObjects", 4}}));
  for (const ParsedDigest& digest : *deleted) {
    EXPECT_TRUE(absl::IsNotFound(store_->Stat(digest).status()));
    EXPECT_EQ(s3_->Keys(layout_.BlobPrefix(digest)),
              std::vector<std::string>{});
    EXPECT_EQ(s3_->Keys(layout_.UsedKey(digest)), std::vector<std::string>{});
    EXPECT_EQ(s3_->Keys(layout_.QuarantineKey(digest)),
              std::vector<std::string>{});
  }
  EXPECT_TRUE(store_->Stat(blobs[1].digest).ok());
  EXPECT_EQ(*store_->ResolveName("n"), blobs[1].digest);
  EXPECT_TRUE(store_->Stat(blobs[5].digest).ok());
  EXPECT_EQ(
      *store_->DeleteUnusedSince({blobs[5].digest, blobs[4].digest}, cutoff),
      std::vector<ParsedDigest>{});
}

// Another replica's use of a blob (FindMissing found it) landing after the
// sweep read its time and before the sweep's mark: the mark, conditional on
// what the sweep read, fails, and the blob is kept whole.
TEST_F(S3SweepTest, AUseAfterTheSweepReadTheTimeKeepsTheBlob) {
  const TestBlob used = Put(40);
  const TestBlob unused = Put(41);
  const std::unique_ptr<S3Store> replica = Replica();
  const absl::Time cutoff = absl::Now() + absl::Hours(1);
  absl::Status use;
  UseBefore("MarkDoomed", layout_.UsedKey(used.digest), *replica, used.digest,
            cutoff + absl::Hours(1), &use);

  absl::StatusOr<std::vector<ParsedDigest>> deleted =
      store_->DeleteUnusedSince({used.digest, unused.digest}, cutoff);
  OnRequest(nullptr);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_TRUE(use.ok()) << use;
  EXPECT_EQ(*deleted, std::vector<ParsedDigest>{unused.digest});
  EXPECT_TRUE(store_->Stat(used.digest).ok());
  EXPECT_FALSE(s3_->Keys(layout_.BlobPrefix(used.digest)).empty());
  EXPECT_EQ(absl::ToUnixSeconds(*store_->LastUsed(used.digest)),
            absl::ToUnixSeconds(cutoff + absl::Hours(1)));
  // The next sweep at the same cutoff keeps it: used since.
  EXPECT_EQ(*store_->DeleteUnusedSince({used.digest}, cutoff),
            std::vector<ParsedDigest>{});
}

// A use after the mark finds the blob going: UNAVAILABLE (retried) while
// its descriptor is there, NOT_FOUND once it is gone; a sweep cut short
// after its mark leaves a blob the next one deletes.
TEST_F(S3SweepTest, AUseAfterTheMarkFindsTheBlobGoing) {
  const TestBlob blob = Put(42);
  const std::unique_ptr<S3Store> replica = Replica();
  const absl::Time cutoff = absl::Now() + absl::Hours(1);
  absl::Status use;
  UseBefore("DeleteObjects", "", *replica, blob.digest, cutoff + absl::Hours(1),
            &use);
  s3_->Inject(S3Fault{"DeleteObjects", 1});
  EXPECT_FALSE(store_->DeleteUnusedSince({blob.digest}, cutoff).ok());
  OnRequest(nullptr);
  EXPECT_TRUE(absl::IsUnavailable(use)) << use;
  EXPECT_TRUE(absl::IsUnavailable(
      replica->MarkUsed(blob.digest, absl::Now(), absl::ZeroDuration())
          .status()));
  // Cut short with its mark in place: the next sweep, whatever its cutoff.
  EXPECT_EQ(*store_->DeleteUnusedSince({blob.digest}, absl::InfinitePast()),
            std::vector<ParsedDigest>{blob.digest});
  EXPECT_TRUE(s3_->Keys(layout_.BlobPrefix(blob.digest)).empty());
  EXPECT_TRUE(absl::IsNotFound(
      replica->MarkUsed(blob.digest, absl::Now(), absl::ZeroDuration())
          .status()));
}

TEST_F(S3SweepTest, APutOfNewContentClaimsItWithOneRequest) {
  TakeOps();
  const TestBlob blob = MakeRandomTestBlob(900, MerkleParams{}, 45);
  ASSERT_TRUE(PutWith(*store_, blob, PutCommit{}).ok());
  EXPECT_EQ(TakeOps()["SwapUsed"], 1);
  // Timed at the Put: the first collection asks for nothing more.
  ASSERT_TRUE(store_->LastUsedOf({blob.digest}).ok());
  EXPECT_EQ(TakeOps(), (std::map<std::string, int>{{"GetUsed", 1}}));
}

// A record of new content is one object written only if absent, which no
// sweep deletes: its Put reads used/ and writes nothing but the record. The
// first collection times it.
TEST_F(S3SweepTest, ARecordOfNewContentClaimsNothing) {
  TakeOps();
  const TestBlob blob = MakeRandomTestBlob(900, MerkleParams{}, 50);
  ASSERT_TRUE(PutRecord(*store_, blob).ok());
  std::map<std::string, int> ops = TakeOps();
  EXPECT_EQ(ops["GetUsed"], 1);
  EXPECT_EQ(ops["SwapUsed"], 0);
  EXPECT_EQ(ops["PutObject"], 1);
  EXPECT_TRUE(s3_->Keys(layout_.UsedKey(blob.digest)).empty());
  // A use of it (a tree's check) writes nothing either: it would only
  // start a grace that starts later anyway.
  const absl::StatusOr<absl::Time> before =
      store_->MarkUsed(blob.digest, absl::Now(), absl::ZeroDuration());
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(*before, absl::InfiniteFuture());
  ops = TakeOps();
  EXPECT_EQ(ops["SwapUsed"], 0);
  EXPECT_EQ(ops["GetUsed"], 1);
  EXPECT_TRUE(s3_->Keys(layout_.UsedKey(blob.digest)).empty());
  const absl::StatusOr<std::vector<absl::Time>> times =
      store_->LastUsedOf({blob.digest});
  ASSERT_TRUE(times.ok()) << times.status();
  EXPECT_GE(times->front(), absl::Now() - absl::Minutes(1));
  EXPECT_FALSE(s3_->Keys(layout_.UsedKey(blob.digest)).empty());
}

// A tree Put's check of one of its files: the size from the descriptor,
// and the use, in two GETs (the descriptor's read is the use's check that
// the blob is there), plus the PUT of a time when one is due.
TEST_F(S3SweepTest, ATreeChecksAFileWithTwoGets) {
  const TestBlob blob = MakeRandomTestBlob(900, MerkleParams{}, 53);
  ASSERT_TRUE(PutRecord(*store_, blob).ok());
  TakeOps();
  absl::StatusOr<Store::SizedUse> use =
      store_->MarkUsedSized(blob.digest, absl::Now(), absl::Hours(1));
  ASSERT_TRUE(use.ok()) << use.status();
  EXPECT_EQ(use->data_size, blob.data.size());
  EXPECT_EQ(use->before, absl::InfiniteFuture());  // never timed
  // (And the listing of quarantine/ once a second, as for any open.)
  std::map<std::string, int> ops = TakeOps();
  EXPECT_EQ(ops["GetDescriptor"], 1);
  EXPECT_EQ(ops["GetUsed"], 1);
  EXPECT_EQ(ops["HeadDescriptor"] + ops["SwapUsed"], 0);
  ASSERT_TRUE(store_->LastUsed(blob.digest).ok());
  // Timed two hours ago: the use writes now.
  Raw("PUT", layout_.UsedKey(blob.digest), TwoHoursAgo());
  TakeOps();
  use = store_->MarkUsedSized(blob.digest, absl::Now(), absl::Hours(1));
  ASSERT_TRUE(use.ok()) << use.status();
  EXPECT_LT(use->before, absl::Now() - absl::Hours(1));
  ops = TakeOps();
  EXPECT_EQ(ops["GetDescriptor"], 1);
  EXPECT_EQ(ops["GetUsed"], 1);
  EXPECT_EQ(ops["SwapUsed"], 1);
  EXPECT_EQ(ops["HeadDescriptor"], 0);

  ASSERT_TRUE(store_->DeleteBlob(blob.digest).ok());
  EXPECT_TRUE(absl::IsNotFound(
      store_->MarkUsedSized(blob.digest, absl::Now(), absl::Hours(1))
          .status()));
}

// A record Put of content whose old objects a sweep of leftovers is
// deleting: the record is the descriptor, which that sweep never deletes,
// so it lands whether the sweep's mark comes before or after; and a mark
// the sweep leaves behind (cut short before deleting used/) says nothing of
// the stored blob: a collection and a use time it anew.
TEST_F(S3SweepTest, ARecordPutDuringALeftoverSweepIsKept) {
  const TestBlob blob = MakeRandomTestBlob(900, MerkleParams{}, 51);
  Raw("PUT", layout_.BlobKey(blob.digest, BlobObject::kData), blob.data);
  s3_->Backdate(layout_.BlobPrefix(blob.digest), absl::Hours(2));
  const std::unique_ptr<S3Store> replica = Replica();
  absl::Status put = absl::UnknownError("not run");
  OnRequest([&](const S3Request& request) {
    if (request.op == "MarkDoomed" && absl::IsUnknown(put)) {
      put = PutRecord(*replica, blob).status();
    }
  });
  const std::vector<LeftoverPage> pages =
      SweepLeftovers(absl::Now() - absl::Hours(1), false);
  OnRequest(nullptr);
  ASSERT_TRUE(put.ok()) << put;
  EXPECT_EQ(Objects(pages), 1u);  // the old data object
  EXPECT_EQ(s3_->Keys(layout_.BlobPrefix(blob.digest)),
            std::vector<std::string>{
                layout_.BlobKey(blob.digest, BlobObject::kDescriptor)});
  const absl::StatusOr<std::shared_ptr<const Blob>> stored =
      store_->OpenBlob(blob.digest);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*ReadBlobPart(**stored, BlobPart::kData, 0, blob.data.size()),
            blob.data);

  // The sweep's mark left behind, fresh.
  Raw("PUT", layout_.UsedKey(blob.digest),
      absl::StrCat("doomed ", absl::ToUnixSeconds(absl::Now()), " leftover"));
  const absl::StatusOr<std::vector<ParsedDigest>> deleted =
      store_->DeleteUnusedSince({blob.digest}, absl::Now() - absl::Minutes(1));
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_TRUE(deleted->empty());
  EXPECT_TRUE(store_->Stat(blob.digest).ok());
  Raw("PUT", layout_.UsedKey(blob.digest),
      absl::StrCat("doomed ", absl::ToUnixSeconds(absl::Now()), " leftover"));
  EXPECT_TRUE(
      store_->MarkUsed(blob.digest, absl::Now(), absl::ZeroDuration()).ok());
  EXPECT_FALSE(store_->LastUsedOf({blob.digest})->front() ==
               absl::InfinitePast());
}

// Puts of one content racing: each claim that finds another's as new as
// its own shares it, rather than writing over it until one gives up. An
// older time is written over.
TEST_F(S3SweepTest, PutsOfOneContentShareAClaim) {
  const TestBlob blob = MakeRandomTestBlob(900, MerkleParams{}, 48);
  std::string time = absl::StrCat(absl::ToUnixSeconds(absl::Now()) + 1);
  OnRequest([&](const S3Request& request) {
    if (request.op == "SwapUsed")
      Raw("PUT", layout_.UsedKey(blob.digest), time);
  });
  EXPECT_TRUE(PutWith(*store_, blob, PutCommit{}).ok());

  const TestBlob other = MakeRandomTestBlob(900, MerkleParams{}, 49);
  time = TwoHoursAgo();
  OnRequest([&](const S3Request& request) {
    if (request.op == "SwapUsed")
      Raw("PUT", layout_.UsedKey(other.digest), time);
  });
  EXPECT_TRUE(
      absl::IsUnavailable(PutWith(*store_, other, PutCommit{}).status()));
  OnRequest(nullptr);
}

// A Put of content a sweep is deleting, landing after the sweep deleted its
// descriptor and before it lists the blob's objects to delete them: its
// claim on used/ finds the doomed mark, and it is refused (it would have
// written objects the sweep then deletes); once the sweep is done, it
// stores the blob whole.
TEST_F(S3SweepTest, APutOfContentBeingSweptIsRefused) {
  const TestBlob blob = Put(43);
  const std::unique_ptr<S3Store> replica = Replica();
  absl::Status put = absl::UnknownError("not run");
  OnRequest([&](const S3Request& request) {
    if (request.op == "ListObjectsV2" && absl::IsUnknown(put)) {
      put = PutWith(*replica, blob, PutCommit{}).status();
    }
  });
  const absl::StatusOr<std::vector<ParsedDigest>> deleted =
      store_->DeleteUnusedSince({blob.digest}, absl::Now() + absl::Hours(1));
  OnRequest(nullptr);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_TRUE(absl::IsUnavailable(put)) << put;
  EXPECT_TRUE(s3_->Keys(layout_.BlobPrefix(blob.digest)).empty());

  ASSERT_TRUE(PutWith(*replica, blob, PutCommit{}).ok());
  EXPECT_TRUE(store_->Stat(blob.digest).ok());
  EXPECT_FALSE(
      s3_->Keys(layout_.BlobKey(blob.digest, BlobObject::kData)).empty());
}

// A Put of a leftover's content landing after the leftover sweep listed it
// and before its mark: the claim makes the mark fail, and the sweep leaves
// the blob the Put stored.
TEST_F(S3SweepTest, APutClaimsALeftoverBeforeTheSweepMarksIt) {
  const TestBlob blob = Put(44);
  Raw("DELETE", layout_.BlobKey(blob.digest, BlobObject::kDescriptor));
  s3_->Backdate(layout_.BlobPrefix(blob.digest), absl::Hours(2));
  Raw("PUT", layout_.UsedKey(blob.digest), TwoHoursAgo());
  const std::unique_ptr<S3Store> replica = Replica();
  absl::Status put = absl::UnknownError("not run");
  OnRequest([&](const S3Request& request) {
    if (request.op == "MarkDoomed" && absl::IsUnknown(put)) {
      put = PutWith(*replica, blob, PutCommit{}).status();
    }
  });
  const std::vector<LeftoverPage> pages =
      SweepLeftovers(absl::Now() - absl::Hours(1), false);
  OnRequest(nullptr);
  EXPECT_TRUE(put.ok()) << put;
  EXPECT_EQ(Objects(pages), 0u);
  EXPECT_TRUE(store_->Stat(blob.digest).ok());
  EXPECT_FALSE(
      s3_->Keys(layout_.BlobKey(blob.digest, BlobObject::kData)).empty());
}

// A mark a sweep cut short left long ago (the blob's objects deleted, its
// used/ not yet) does not keep the content out: a Put takes it over. A
// recent one does, until the sweep is done.
TEST_F(S3SweepTest, APutTakesOverAStaleMark) {
  const TestBlob stale = MakeRandomTestBlob(800, MerkleParams{}, 46);
  Raw("PUT", layout_.UsedKey(stale.digest), "doomed " + TwoHoursAgo());
  EXPECT_TRUE(PutWith(*store_, stale, PutCommit{}).ok());
  EXPECT_TRUE(store_->Stat(stale.digest).ok());
  EXPECT_TRUE(
      store_->MarkUsed(stale.digest, absl::Now(), absl::ZeroDuration()).ok());

  const TestBlob live = MakeRandomTestBlob(800, MerkleParams{}, 47);
  Raw("PUT", layout_.UsedKey(live.digest),
      absl::StrCat("doomed ", absl::ToUnixSeconds(absl::Now())));
  EXPECT_TRUE(
      absl::IsUnavailable(PutWith(*store_, live, PutCommit{}).status()));
  EXPECT_TRUE(s3_->Keys(layout_.BlobPrefix(live.digest)).empty());

  // A record's Put as well: it finds the mark and claims.
  EXPECT_TRUE(absl::IsUnavailable(PutRecord(*store_, live).status()));
  EXPECT_TRUE(s3_->Keys(layout_.BlobPrefix(live.digest)).empty());
  const TestBlob stale_record = MakeRandomTestBlob(800, MerkleParams{}, 52);
  Raw("PUT", layout_.UsedKey(stale_record.digest), "doomed " + TwoHoursAgo());
  EXPECT_TRUE(PutRecord(*store_, stale_record).ok());
  const absl::StatusOr<std::vector<absl::Time>> times =
      store_->LastUsedOf({stale_record.digest});
  ASSERT_TRUE(times.ok()) << times.status();
  EXPECT_GE(times->front(), absl::Now() - absl::Minutes(1));
}

TEST_F(S3SweepTest, LastUsedOfAsksOneGetABlob) {
  std::vector<ParsedDigest> digests;
  std::vector<absl::Time> want;
  for (uint32_t i = 0; i < 5; ++i) {
    const TestBlob blob = Put(30 + i);
    // Later than its Put's (a time only moves forward); whole seconds.
    const absl::Time used = absl::FromUnixSeconds(
        absl::ToUnixSeconds(absl::Now()) + 3600 * (i + 1));
    ASSERT_TRUE(store_->MarkUsed(blob.digest, used, absl::ZeroDuration()).ok());
    digests.push_back(blob.digest);
    want.push_back(used);
  }
  // Gone meanwhile.
  digests.push_back(MakeRandomTestBlob(100, MerkleParams{}, 39).digest);
  want.push_back(absl::InfiniteFuture());
  TakeOps();

  absl::StatusOr<std::vector<absl::Time>> times = store_->LastUsedOf(digests);
  ASSERT_TRUE(times.ok()) << times.status();
  EXPECT_EQ(*times, want);
  // One GET of each used/; the one with none asks whether it is there.
  const std::map<std::string, int> ops = TakeOps();
  EXPECT_EQ(ops.at("GetUsed"), 6);
  int others = 0;
  for (const auto& [op, n] : ops) others += op == "GetUsed" ? 0 : n;
  EXPECT_LE(others, 2);
}

TEST_F(S3SweepTest, LeftoversOlderThanTheCutoffGo) {
  const TestBlob kept = Put(20);
  // A delete cut short after its commit point, long ago.
  const TestBlob cut = Put(21);
  Raw("DELETE", layout_.BlobKey(cut.digest, BlobObject::kDescriptor));
  s3_->Backdate(layout_.BlobPrefix(cut.digest), absl::Hours(2));
  Raw("PUT", layout_.UsedKey(cut.digest), TwoHoursAgo());
  // A Put under way (its objects new), and an abandoned staged upload.
  const TestBlob staging = MakeRandomTestBlob(700, MerkleParams{}, 22);
  Raw("PUT", layout_.BlobKey(staging.digest, BlobObject::kData));
  Raw("PUT", layout_.UploadKey("abandoned"));
  s3_->Backdate(layout_.UploadKey("abandoned"), absl::Hours(2));
  const size_t cut_objects = s3_->Keys(layout_.BlobPrefix(cut.digest)).size();
  const absl::Time cutoff = absl::Now() - absl::Hours(1);

  const std::vector<LeftoverPage> dry = SweepLeftovers(cutoff, true);
  // The cut blob's objects and the upload.
  EXPECT_EQ(Objects(dry), cut_objects + 1);
  EXPECT_FALSE(s3_->Keys(layout_.BlobPrefix(cut.digest)).empty());

  SweepLeftovers(cutoff, false);
  EXPECT_EQ(s3_->Keys(layout_.BlobPrefix(cut.digest)),
            std::vector<std::string>{});
  EXPECT_EQ(s3_->Keys(layout_.UsedKey(cut.digest)), std::vector<std::string>{});
  EXPECT_EQ(s3_->Keys(layout_.uploads_prefix()), std::vector<std::string>{});
  EXPECT_EQ(s3_->Keys(layout_.BlobPrefix(staging.digest)).size(), 1u);
  EXPECT_TRUE(store_->Stat(kept.digest).ok());

  // Once it is old too, the Put's piece goes; a stored blob never does.
  SweepLeftovers(absl::Now() + absl::Hours(1), false);
  EXPECT_EQ(s3_->Keys(layout_.BlobPrefix(staging.digest)),
            std::vector<std::string>{});
  EXPECT_TRUE(store_->Stat(kept.digest).ok());
}

}  // namespace
}  // namespace verity::server
