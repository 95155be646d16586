// The fault matrix of the file store's reads: EIO on pread of a blob's data,
// tree or descriptor is INTERNAL, never DATA_LOSS (the bytes were not seen,
// so nothing is quarantined and a client may retry another replica); short
// reads are completed; and every step of start-up recovery failing in turn
// fails Open without quarantining or losing anything.

#include <errno.h>

#include <string>

#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "server/store/file/testing/fault_file_system.h"
#include "server/store/file/testing/file_store_fault.h"

namespace verity::server {
namespace {

using FileStoreReadFaultTest = FaultStoreTest;

const std::string& Data() {
  // Eight blocks: a tree of one block to read too.
  static const std::string* const data = new std::string(MakeData(30000, 5));
  return *data;
}

TEST_F(FileStoreReadFaultTest, EioOnDataOrTreeIsInternalAndNothingMore) {
  const std::string text = MustPut(Data(), "d");
  for (const char* part : {" data", " tree"}) {
    SCOPED_TRACE(part);
    fs_.Inject(Fault{FileOp::kPread, 0, false, part, EIO});
    const absl::Status read = ReadBack(text).status();
    EXPECT_EQ(read.code(), absl::StatusCode::kInternal) << read;
    fs_.Reset();
    EXPECT_TRUE(store_->Stat(DigestFromText(text)).ok());
    ExpectAcknowledgedIntact();
  }
  Restart();
  ExpectAcknowledgedIntact();
  ExpectConsistent(true);
}

TEST_F(FileStoreReadFaultTest, EioOnTheDescriptorAtOpenBlobIsInternal) {
  const std::string text = MustPut(Data());
  fs_.Inject(Fault{FileOp::kPread, 1, false, "descriptor", EIO});
  const absl::Status open = store_->OpenBlob(DigestFromText(text)).status();
  EXPECT_EQ(open.code(), absl::StatusCode::kInternal) << open;
  fs_.Reset();
  ExpectAcknowledgedIntact();
}

TEST_F(FileStoreReadFaultTest, EveryReadFailingInTurnIsInternal) {
  const std::string text = MustPut(Data());
  for (int step = 1;; ++step) {
    SCOPED_TRACE(step);
    fs_.Inject(Fault{FileOp::kPread, step, false, "", EIO});
    const int hits = fs_.faults_hit();
    const absl::Status read = ReadBack(text).status();
    const bool hit = fs_.faults_hit() > hits;
    fs_.Reset();
    if (!hit) {
      EXPECT_TRUE(read.ok()) << read;
      break;
    }
    EXPECT_EQ(read.code(), absl::StatusCode::kInternal) << read;
  }
  ExpectAcknowledgedIntact();
}

TEST_F(FileStoreReadFaultTest, ShortReadsAreCompleted) {
  MustPut(Data());
  fs_.Inject(Fault{FileOp::kPread, 0, false, "", 0, /*short_transfer=*/true});
  ExpectAcknowledgedIntact();
  Restart();
  ExpectAcknowledgedIntact();
}

TEST_F(FileStoreReadFaultTest,
       EveryStepOfRecoveryFailingFailsOpenAndLosesNothing) {
  MustPut(Data(), "d");
  MustPut(MakeData(100, 6), "small");
  FileStoreOptions options;
  options.root = root_;
  options.log = log_.Sink();
  options.file_system = &fs_;
  store_.reset();
  for (int step = 1;; ++step) {
    SCOPED_TRACE(step);
    const int hits = fs_.faults_hit();
    fs_.Inject(Fault{FileOp::kAny, step, false, "", EIO});
    const absl::Status open = FileStore::Open(options).status();
    const bool hit = fs_.faults_hit() > hits;
    fs_.Reset();
    if (hit) {
      EXPECT_EQ(open.code(), absl::StatusCode::kInternal) << open;
    }
    Restart();
    ExpectAcknowledgedIntact();
    ExpectConsistent(true);
    store_.reset();
    if (!hit || HasFailure()) {
      RecordSteps(step);
      break;
    }
  }
}

}  // namespace
}  // namespace verity::server
