// The S3 store's fault matrix, over FakeS3 (no network): each request of a
// Put failing in turn (503, or a reset after it took effect), the process
// stopped before each request, each read's GET failing, truncated or
// corrupted, and each request of a delete failing. The checks: the right
// status, acknowledged blobs survive and verify, a blob is whole or absent,
// corrupted bytes are never delivered, a new store on the bucket aborts
// what a dead one left, and the operation succeeds when tried again.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "lib/base/executor.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/merkle_builder.h"
#include "server/store/s3/s3_store.h"
#include "server/store/s3/testing/fake_s3.h"
#include "server/store/s3/testing/fake_s3_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

ParsedDigest DigestOf(absl::string_view data) {
  MerkleBuilder builder{MerkleParams{}};
  EXPECT_TRUE(builder.Update(AsBytes(data)).ok());
  const MerkleTree tree = builder.Finish().value();
  return ParsedDigest{tree.descriptor.hash_algorithm, tree.digest};
}

const std::string& Small() {
  static const std::string* const data = new std::string(MakeData(9000, 1));
  return *data;
}

// One record (a Put with its size, at most record_max_bytes).
const std::string& Record() {
  static const std::string* const data = new std::string(MakeData(20000, 3));
  return *data;
}

// Two multipart parts of 5 MiB.
const std::string& Big() {
  static const std::string* const data =
      new std::string(MakeData((size_t{5} << 20) + 70000, 2));
  return *data;
}

class S3StoreFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenStore(); }

  // A new process on the same bucket.
  void OpenStore() {
    store_.reset();
    S3StoreOptions options = FakeS3StoreOptions(s3_);
    options.put_executor = put_executor_;
    absl::StatusOr<std::unique_ptr<S3Store>> store = S3Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  void StartOver() {
    s3_ = std::make_shared<FakeS3>();
    acked_.clear();
    OpenStore();
  }

  // `sized`: the Put says its size (a small blob is then one record).
  absl::Status Put(absl::string_view data, bool expected,
                   absl::string_view name = "", bool sized = false) {
    const std::optional<ParsedDigest> digest =
        expected ? std::optional<ParsedDigest>(DigestOf(data)) : std::nullopt;
    absl::StatusOr<std::unique_ptr<PutWriter>> writer = store_->BeginPut(
        MerkleParams{}, digest,
        sized ? std::optional<uint64_t>(data.size()) : std::nullopt);
    if (!writer.ok()) return writer.status();
    for (size_t at = 0; at < data.size(); at += 1 << 20) {
      absl::Status appended =
          (*writer)->Append(AsBytes(data.substr(at, 1 << 20)));
      if (!appended.ok()) return appended;
    }
    const absl::Status committed = (*writer)->Commit(digest, name).status();
    if (committed.ok()) acked_[DigestOf(data).ToString()] = std::string(data);
    return committed;
  }

  // All of the blob, verified as the server verifies it.
  absl::StatusOr<std::string> ReadBack(const ParsedDigest& digest) {
    absl::StatusOr<std::shared_ptr<const Blob>> blob = store_->OpenBlob(digest);
    if (!blob.ok()) return blob.status();
    absl::StatusOr<std::shared_ptr<VerifiedBlob>> verified =
        VerifiedBlob::Create(*std::move(blob));
    if (!verified.ok()) return verified.status();
    std::string read;
    const absl::Status status = ReadVerified(
        **verified, 0, (*verified)->geometry().data_block_count(), &read);
    if (!status.ok()) {
      EXPECT_TRUE(read.empty()) << "bytes of a failed read were kept";
      return status;
    }
    return read;
  }

  void ExpectAcknowledgedIntact() {
    for (const auto& [text, data] : acked_) {
      const absl::StatusOr<std::string> back =
          ReadBack(ParseDigest(text).value());
      EXPECT_TRUE(back.ok()) << text << ": " << back.status();
      if (back.ok()) {
        EXPECT_TRUE(*back == data) << text;
      }
    }
  }

  // Served whole, or absent from OpenBlob and List alike.
  bool ExpectWholeOrAbsent(absl::string_view data) {
    const absl::StatusOr<std::string> back = ReadBack(DigestOf(data));
    const absl::StatusOr<std::vector<BlobInfo>> infos = store_->List("", 100);
    EXPECT_TRUE(infos.ok()) << infos.status();
    bool listed = false;
    for (const BlobInfo& info : infos.value_or(std::vector<BlobInfo>{})) {
      listed |= info.digest == DigestOf(data).ToString();
    }
    if (absl::IsNotFound(back.status())) {
      EXPECT_FALSE(listed) << "listed without its descriptor";
      return false;
    }
    EXPECT_TRUE(back.ok()) << "partly there: " << back.status();
    if (back.ok()) {
      EXPECT_TRUE(*back == data) << "reads back wrong";
    }
    EXPECT_TRUE(listed);
    return true;
  }

  // After a restart: no multipart upload is left behind.
  void ExpectCleanAfterRestart() {
    OpenStore();
    EXPECT_EQ(s3_->uploads(), 0u);
    ExpectAcknowledgedIntact();
  }

  // In test.xml: how many cases each loop of a test ran.
  void RecordSteps(int steps) {
    RecordProperty(absl::StrCat("steps_", ++loops_), steps);
  }

  std::shared_ptr<FakeS3> s3_ = std::make_shared<FakeS3>();
  Executor* put_executor_ = nullptr;
  std::unique_ptr<S3Store> store_;
  std::map<std::string, std::string> acked_;
  int loops_ = 0;
};

// The victim: a blob of two parts' objects, or one record. A record's Put
// differs from a parts Put's only with the digest known (the data goes to
// no staging object either way), which is how the SDK, the CLI and
// BatchUpdate put one: the record is not run staged.
struct Victim {
  const char* what;
  const std::string& data;
  bool sized;
};
std::vector<Victim> Victims() {
  return {{"parts", Big(), false}, {"record", Record(), true}};
}

TEST_F(S3StoreFaultTest, EveryRequestOfAPutFailingInTurn) {
  for (const Victim& victim : Victims()) {
    for (const bool applied : {false, true}) {
      for (const bool expected : {true, false}) {
        if (victim.sized && !expected) continue;
        SCOPED_TRACE(absl::StrCat(
            victim.what, ", ", applied ? "reset after it took effect" : "503",
            expected ? ", digest known" : ", staged"));
        for (int step = 1;; ++step) {
          StartOver();
          ASSERT_TRUE(Put(Small(), true, "small").ok());
          const int hits = s3_->faults_hit();
          s3_->Inject(S3Fault{
              "", step, applied ? S3FaultKind::kReset : S3FaultKind::kHttp503,
              applied});
          const absl::Status put =
              Put(victim.data, expected, "big", victim.sized);
          const bool hit = s3_->faults_hit() > hits;
          SCOPED_TRACE(absl::StrCat("step ", step, " (", s3_->last_hit(),
                                    "): ", put.ToString()));
          s3_->Reset();
          if (!put.ok()) {
            EXPECT_EQ(put.code(), absl::StatusCode::kUnavailable);
          }
          EXPECT_TRUE(ExpectWholeOrAbsent(victim.data) || !put.ok());
          ExpectAcknowledgedIntact();
          ExpectCleanAfterRestart();
          ExpectWholeOrAbsent(victim.data);
          EXPECT_TRUE(Put(victim.data, expected, "big", victim.sized).ok());
          ExpectAcknowledgedIntact();
          if (!hit || HasFailure()) {
            RecordSteps(step);
            break;
          }
        }
      }
    }
  }
}

TEST_F(S3StoreFaultTest, CrashBeforeEveryRequestOfAPut) {
  for (const Victim& victim : Victims()) {
    for (const bool expected : {true, false}) {
      if (victim.sized && !expected) continue;
      SCOPED_TRACE(absl::StrCat(victim.what, ", ",
                                expected ? "digest known" : "staged"));
      for (int step = 1;; ++step) {
        StartOver();
        ASSERT_TRUE(Put(Small(), true, "small").ok());
        s3_->CrashAtRequest(step);
        const absl::Status put =
            Put(victim.data, expected, "big", victim.sized);
        const bool crashed = s3_->crashed();
        SCOPED_TRACE(
            absl::StrCat("crash before request ", step, ": ", put.ToString()));
        s3_->Reset();
        ExpectCleanAfterRestart();
        ExpectWholeOrAbsent(victim.data);
        EXPECT_TRUE(Put(victim.data, expected, "big", victim.sized).ok());
        ExpectAcknowledgedIntact();
        if (!crashed || HasFailure()) {
          RecordSteps(step);
          break;
        }
      }
    }
  }
}

TEST_F(S3StoreFaultTest, ReadsNeverDeliverBadBytes) {
  ASSERT_TRUE(Put(Big(), true).ok());
  const struct {
    S3FaultKind kind;
    absl::StatusCode code;
  } cases[] = {
      {S3FaultKind::kHttp503, absl::StatusCode::kUnavailable},
      {S3FaultKind::kTimeout, absl::StatusCode::kUnavailable},
      {S3FaultKind::kReset, absl::StatusCode::kUnavailable},
      {S3FaultKind::kTruncate, absl::StatusCode::kDataLoss},
      {S3FaultKind::kCorrupt, absl::StatusCode::kDataLoss},
  };
  for (const auto& c : cases) {
    for (const char* op : {"GetDescriptor", "GetTree", "GetData"}) {
      SCOPED_TRACE(absl::StrCat(op, " ", static_cast<int>(c.kind)));
      s3_->Inject(S3Fault{op, 0, c.kind});
      const absl::StatusOr<std::string> back = ReadBack(DigestOf(Big()));
      s3_->Reset();
      // A descriptor cut short or flipped fails its own check, as damage.
      EXPECT_EQ(back.status().code(), c.code) << back.status();
    }
  }
  ExpectAcknowledgedIntact();
}

TEST_F(S3StoreFaultTest, EveryRequestOfADeleteFailingInTurn) {
  for (int step = 1;; ++step) {
    StartOver();
    ASSERT_TRUE(Put(Small(), true, "small").ok());
    ASSERT_TRUE(Put(Big(), true, "big").ok());
    acked_.erase(DigestOf(Big()).ToString());
    const int hits = s3_->faults_hit();
    s3_->Inject(S3Fault{"", step, S3FaultKind::kHttp503});
    const absl::Status deleted = store_->DeleteBlob(DigestOf(Big()));
    const bool hit = s3_->faults_hit() > hits;
    SCOPED_TRACE(absl::StrCat("step ", step, " (", s3_->last_hit(),
                              "): ", deleted.ToString()));
    s3_->Reset();
    if (!deleted.ok()) {
      EXPECT_EQ(deleted.code(), absl::StatusCode::kUnavailable);
    }
    // Gone with its name, or still there; never a name pointing at nothing.
    const bool stored = ExpectWholeOrAbsent(Big());
    EXPECT_TRUE(!stored || !deleted.ok());
    if (!stored) {
      EXPECT_TRUE(absl::IsNotFound(store_->ResolveName("big").status()));
    }
    ExpectAcknowledgedIntact();
    // Tried again, the delete finishes.
    const absl::Status again = store_->DeleteBlob(DigestOf(Big()));
    EXPECT_TRUE(again.ok() || absl::IsNotFound(again)) << again;
    EXPECT_FALSE(ExpectWholeOrAbsent(Big()));
    EXPECT_TRUE(absl::IsNotFound(store_->ResolveName("big").status()));
    if (!hit || HasFailure()) {
      RecordSteps(step);
      break;
    }
  }
}

// A Put may wait for a part slot: its writer names the store's executor for
// Puts, where the RPC layer then runs its steps instead of where reads run.
TEST_F(S3StoreFaultTest, WritersNameTheStoresPutExecutor) {
  Executor executor(CompletionThreadOptions("test-puts"));
  // Without one, none: the caller's own threads wait.
  EXPECT_EQ(store_->BeginPut(MerkleParams{}, std::nullopt).value()->executor(),
            nullptr);
  put_executor_ = &executor;
  OpenStore();
  std::unique_ptr<PutWriter> writer =
      *store_->BeginPut(MerkleParams{}, std::nullopt);
  EXPECT_EQ(writer->executor(), &executor);
  // Still an ordinary writer for a caller that runs it itself.
  ASSERT_TRUE(writer->Append(AsBytes(Small())).ok());
  EXPECT_TRUE(writer->Commit(std::nullopt, "").ok());
  acked_[DigestOf(Small()).ToString()] = Small();
  ExpectAcknowledgedIntact();
}

}  // namespace
}  // namespace verity::server
