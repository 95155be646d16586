// The fault matrix of a Put into the file store: the process stopped before
// each of its file calls in turn, then a power cut (SQLite's crash test);
// each call failing in turn with EIO and ENOSPC; every fsync and rename
// failing; a disk that fills up; short writes. The checks are
// FaultStoreTest's: what was acknowledged survives and verifies, the Put's
// blob is whole or absent, nothing is partial, tmp/ is emptied, and the Put
// succeeds when tried again.

#include "server/store/file/testing/file_store_fault.h"

#include <errno.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "server/store/file/testing/fault_file_system.h"

namespace verity::server {
namespace {

using ::testing::Ge;
using ::testing::IsEmpty;

using FileStoreFaultTest = ShapedFaultStoreTest;

const std::string& Old() {
  static const std::string* const data = new std::string(MakeData(9000, 1));
  return *data;
}

// Several blocks, in pieces that straddle them, so that a Put has writes to
// fail between its first and its last.
const std::string& New() {
  static const std::string* const data = new std::string(MakeData(30000, 2));
  return *data;
}

absl::Status Status(const absl::StatusOr<PutResult>& put) {
  return put.status();
}

TEST_P(FileStoreFaultTest, CrashAtEveryStepOfANamedPut) {
  const int steps = CrashAtEachStep(
      [&] { MustPut(Old(), "old"); }, [&] { return Status(Put(New(), "new")); },
      [&] {
        const bool stored = ExpectWholeOrAbsent(New());
        const absl::StatusOr<ParsedDigest> named = store_->ResolveName("new");
        if (named.ok()) {
          EXPECT_TRUE(stored) << "a name points at a blob that is not there";
          EXPECT_EQ(named->ToString(), DigestTextOf(New()));
        }
        MustPut(New(), "new");
      });
  // Staging, five writes and a syncfs, the rename and a syncfs, the name
  // file's four steps and its directory's.
  EXPECT_THAT(steps, Ge(13));
}

TEST_P(FileStoreFaultTest, CrashAtEveryStepOfAPutIntoAnExistingShard) {
  const std::string neighbour = DataInTheShardOf(Old());
  CrashAtEachStep([&] { MustPut(Old()); },
                  [&] { return Status(Put(neighbour)); },
                  [&] {
                    ExpectWholeOrAbsent(neighbour);
                    MustPut(neighbour);
                  });
}

TEST_P(FileStoreFaultTest, CrashAtEveryStepOfRepointingAName) {
  CrashAtEachStep(
      [&] { MustPut(Old(), "n"); }, [&] { return Status(Put(New(), "n")); },
      [&] {
        const bool stored = ExpectWholeOrAbsent(New());
        acked_names_.erase("n");
        const std::string points_at = store_->ResolveName("n")->ToString();
        if (points_at != DigestTextOf(Old())) {
          EXPECT_EQ(points_at, DigestTextOf(New()));
          EXPECT_TRUE(stored);
        }
        MustPut(New(), "n");
      });
}

TEST_P(FileStoreFaultTest, CrashAtEveryStepOfNamingAStoredBlob) {
  CrashAtEachStep([&] { MustPut(Old(), "first"); },
                  [&] { return Status(Put(Old(), "second")); },
                  [&] {
                    const absl::StatusOr<ParsedDigest> named =
                        store_->ResolveName("second");
                    if (named.ok()) {
                      EXPECT_EQ(named->ToString(), DigestTextOf(Old()));
                    } else {
                      EXPECT_TRUE(absl::IsNotFound(named.status()));
                    }
                    MustPut(Old(), "second");
                  });
}

TEST_P(FileStoreFaultTest, CrashAtEveryStepOfReputtingAQuarantinedBlob) {
  for (int step = 1;; ++step) {
    StartOver("");
    const std::string text = MustPut(Old(), "q");
    ASSERT_TRUE(store_->Quarantine(DigestFromText(text), "test").ok());
    acked_.clear();
    fs_.CrashAtCall(step);
    const absl::Status put = Status(Put(Old()));
    const bool crashed = fs_.crashed();
    SCOPED_TRACE(
        absl::StrCat("crash before step ", step, ": ", put.ToString()));
    PowerCut();
    // Still quarantined, or served whole; its name survives either way.
    const absl::StatusOr<std::string> back = ReadBack(text);
    if (!back.ok()) {
      EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
      EXPECT_THAT(std::string(back.status().message()),
                  ::testing::HasSubstr("quarantined"));
    } else {
      EXPECT_TRUE(*back == Old());
      EXPECT_THAT(EntriesOf(root_ + "/quarantine"), IsEmpty());
    }
    EXPECT_EQ(store_->ResolveName("q")->ToString(), text);
    ExpectConsistent(true, /*quarantined=*/1);
    MustPut(Old());
    ExpectAcknowledgedIntact();
    if (!crashed || HasFailure()) {
      RecordSteps(step);
      break;
    }
  }
}

TEST_P(FileStoreFaultTest, FailEveryStepOfANamedPut) {
  for (const int error : {EIO, ENOSPC}) {
    SCOPED_TRACE(error == EIO ? "EIO" : "ENOSPC");
    const int steps = FailAtEachStep(
        Fault{FileOp::kAny, 0, false, "", error},
        [&] { MustPut(Old(), "old"); },
        [&] { return Status(Put(New(), "new")); },
        [&] {
          ExpectWholeOrAbsent(New());
          const absl::StatusOr<ParsedDigest> named = store_->ResolveName("new");
          if (named.ok()) {
            EXPECT_EQ(named->ToString(), DigestTextOf(New()));
          }
        });
    EXPECT_THAT(steps, Ge(15));
    StartOver("");
    MustPut(New(), "new");
    ExpectAcknowledgedIntact();
  }
}

// No name: a failed Put then shows nothing at all (with a name, the blob may
// stay stored when only the name fails; see PutWriter::Commit).
TEST_P(FileStoreFaultTest, EverySyncOrRenameFailureFailsThePutAndShowsNothing) {
  for (const FileOp op : {FileOp::kFsync, FileOp::kSyncFs, FileOp::kRename}) {
    SCOPED_TRACE(FileOpName(op));
    const int steps = FailAtEachStep(
        Fault{op, 0, false, "", EIO}, [&] { MustPut(Old()); },
        [&] {
          const absl::Status put = Status(Put(New()));
          const bool stored =
              store_->Stat(DigestFromText(DigestTextOf(New()))).status().ok();
          EXPECT_EQ(stored, put.ok()) << put;
          return put;
        },
        [&] { ExpectWholeOrAbsent(New()); });
    // The staged files' syncfs and the rename's: each failed in turn.
    if (op == FileOp::kSyncFs) EXPECT_EQ(steps, 3);
  }
}

TEST_P(FileStoreFaultTest, FullDiskWhileStreamingIsResourceExhausted) {
  MustPut(Old());
  fs_.Inject(Fault{FileOp::kWrite, 2, true, "", ENOSPC});
  const absl::Status put = Status(Put(New()));
  EXPECT_EQ(put.code(), absl::StatusCode::kResourceExhausted) << put;
  // The staging directory goes at once, freeing the space.
  EXPECT_THAT(EntriesOf(root_ + "/tmp"), IsEmpty());
  ExpectWholeOrAbsent(New());
  ExpectConsistent(false);
  fs_.Reset();
  MustPut(New());
  PowerCut();
  ExpectAcknowledgedIntact();
}

TEST_P(FileStoreFaultTest, DiskFillingUpMidWriteIsResourceExhausted) {
  // write(2) takes what still fits, then refuses.
  fs_.Inject(Fault{FileOp::kWrite, 3, false, "", 0, /*short_transfer=*/true});
  fs_.Inject(Fault{FileOp::kWrite, 4, true, "", ENOSPC});
  const absl::Status put = Status(Put(New()));
  EXPECT_EQ(put.code(), absl::StatusCode::kResourceExhausted) << put;
  EXPECT_FALSE(ExpectWholeOrAbsent(New()));
  PowerCut();
  EXPECT_FALSE(ExpectWholeOrAbsent(New()));
  ExpectConsistent(true);
}

TEST_P(FileStoreFaultTest, ShortWritesStoreTheWholeBlob) {
  fs_.Inject(Fault{FileOp::kWrite, 0, false, "", 0, /*short_transfer=*/true});
  MustPut(New(), "new");
  PowerCut();
  ExpectAcknowledgedIntact();
  ExpectConsistent(true);
}

// A shard whose creation was not made durable (its Put failed at the fsync
// of blobs/<alg>) once made the next Put into it skip that fsync: acknowledged,
// then lost with the whole shard in a power cut.
TEST_P(FileStoreFaultTest, FailedShardFsyncDoesNotCostTheNextPut) {
  fs_.Inject(Fault{FileOp::kFsync, 1, false, root_ + "/blobs/sha256", EIO});
  EXPECT_EQ(Status(Put(Old())).code(), absl::StatusCode::kInternal);
  MustPut(DataInTheShardOf(Old()));
  PowerCut();
  ExpectAcknowledgedIntact();
  ExpectConsistent(true);
}

// A batch of new blobs (two of them the same content) and one stored
// already.
std::vector<std::string> Batch() {
  std::vector<std::string> batch = {Old()};
  for (uint64_t seed = 20; seed < 25; ++seed) {
    batch.push_back(MakeData(3000 + 1000 * seed, seed));
  }
  batch.push_back(batch[2]);
  return batch;
}

// SQLite's crash test over Store::PutBatch: every blob of the batch is whole
// or absent after a crash before any of its steps, a blob acknowledged
// survives, and nothing is partial.
TEST_F(FaultStoreTest, CrashAtEveryStepOfABatch) {
  const std::vector<std::string> batch = Batch();
  const int steps =
      CrashAtEachStep([&] { MustPut(Old()); }, [&] { return PutBatch(batch); },
                      [&] {
                        for (const std::string& data : batch) {
                          ExpectWholeOrAbsent(data);
                        }
                        EXPECT_TRUE(PutBatch(batch).ok());
                      });
  // Five records staged (an open, a write and a pwrite each), a syncfs,
  // five renames, a syncfs.
  EXPECT_THAT(steps, Ge(22));
}

TEST_F(FaultStoreTest, FailEveryStepOfABatch) {
  const std::vector<std::string> batch = Batch();
  for (const int error : {EIO, ENOSPC}) {
    SCOPED_TRACE(error == EIO ? "EIO" : "ENOSPC");
    FailAtEachStep(
        Fault{FileOp::kAny, 0, false, "", error}, [&] { MustPut(Old()); },
        [&] { return PutBatch(batch); },
        [&] {
          for (const std::string& data : batch) {
            ExpectWholeOrAbsent(data);
          }
        });
    StartOver("");
    EXPECT_TRUE(PutBatch(batch).ok());
    ExpectAcknowledgedIntact();
  }
}

// Each blob stored as a directory of files, and as one record.
INSTANTIATE_TEST_SUITE_P(Shapes, FileStoreFaultTest, ::testing::Bool(),
                         ShapeName);

}  // namespace
}  // namespace verity::server
