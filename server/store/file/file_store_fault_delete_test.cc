// The fault matrix of the file store's other changes: deleting a blob or a
// name and quarantining a blob, with the process stopped before each step in
// turn (then a power cut) or each step failing with EIO. Each leaves the old
// state or the new one, never a mix: a blob whole with all its names, or gone
// with all of them.

#include <errno.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "server/store/file/testing/fault_file_system.h"
#include "server/store/file/testing/file_store_fault.h"

namespace verity::server {
namespace {

using ::testing::HasSubstr;

class FileStoreDeleteFaultTest : public ShapedFaultStoreTest {
 protected:
  const std::string doomed_ = MakeData(20000, 3);
  const std::string kept_ = MakeData(5000, 4);

  void SetUpBlobs() {
    MustPut(doomed_, "a");
    MustPut(doomed_, "b");
    MustPut(kept_, "kept");
  }

  ParsedDigest Doomed() const { return DigestFromText(DigestTextOf(doomed_)); }

  // The doomed blob is whole with both names, or gone with both.
  void ExpectOldOrNewState() {
    Forget(doomed_);
    const bool stored = ExpectWholeOrAbsent(doomed_);
    for (const char* name : {"a", "b"}) {
      const absl::StatusOr<ParsedDigest> named = store_->ResolveName(name);
      EXPECT_EQ(named.ok(), stored) << name << ": " << named.status();
    }
  }

  // Served whole, or quarantined; its name stays either way.
  void ExpectServedOrQuarantined() {
    Forget(doomed_);
    const absl::StatusOr<std::string> back = ReadBack(DigestTextOf(doomed_));
    if (!back.ok()) {
      EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
      EXPECT_THAT(std::string(back.status().message()),
                  HasSubstr("quarantined"));
    } else {
      EXPECT_TRUE(*back == doomed_);
    }
    EXPECT_TRUE(store_->ResolveName("a").ok());
  }
};

TEST_P(FileStoreDeleteFaultTest, CrashAtEveryStepOfDeletingANamedBlob) {
  CrashAtEachStep([&] { SetUpBlobs(); },
                  [&] { return store_->DeleteBlob(Doomed()); },
                  [&] { ExpectOldOrNewState(); });
}

TEST_P(FileStoreDeleteFaultTest, FailEveryStepOfDeletingANamedBlob) {
  FailAtEachStep(
      Fault{FileOp::kAny, 0, false, "", EIO}, [&] { SetUpBlobs(); },
      [&] { return store_->DeleteBlob(Doomed()); },
      [&] { ExpectOldOrNewState(); });
}

TEST_P(FileStoreDeleteFaultTest, CrashAtEveryStepOfDeletingAName) {
  CrashAtEachStep(
      [&] { SetUpBlobs(); }, [&] { return store_->DeleteName("a"); },
      [&] {
        acked_names_.erase("a");
        const absl::StatusOr<ParsedDigest> named = store_->ResolveName("a");
        if (named.ok()) {
          EXPECT_EQ(*named, Doomed());
        } else {
          EXPECT_TRUE(absl::IsNotFound(named.status()));
        }
      });
}

TEST_P(FileStoreDeleteFaultTest, FailEveryStepOfDeletingAName) {
  FailAtEachStep(
      Fault{FileOp::kAny, 0, false, "", EIO}, [&] { SetUpBlobs(); },
      [&] { return store_->DeleteName("a"); },
      [&] {
        acked_names_.erase("a");
        const absl::StatusOr<ParsedDigest> named = store_->ResolveName("a");
        EXPECT_TRUE(named.ok() || absl::IsNotFound(named.status()));
      });
}

TEST_P(FileStoreDeleteFaultTest, CrashAtEveryStepOfQuarantiningABlob) {
  for (int step = 1;; ++step) {
    StartOver("");
    SetUpBlobs();
    fs_.CrashAtCall(step);
    const absl::Status status = store_->Quarantine(Doomed(), "test");
    const bool crashed = fs_.crashed();
    SCOPED_TRACE(step);
    PowerCut();
    ExpectServedOrQuarantined();
    ExpectAcknowledgedIntact();
    ExpectConsistent(true, /*quarantined=*/1);
    if (!crashed || HasFailure()) {
      EXPECT_TRUE(status.ok()) << status;
      RecordSteps(step);
      break;
    }
  }
}

TEST_P(FileStoreDeleteFaultTest, CrashAtEveryStepOfDeletingAQuarantinedBlob) {
  for (int step = 1;; ++step) {
    StartOver("");
    SetUpBlobs();
    ASSERT_TRUE(store_->Quarantine(Doomed(), "test").ok());
    fs_.CrashAtCall(step);
    const absl::Status status = store_->DeleteBlob(Doomed());
    const bool crashed = fs_.crashed();
    SCOPED_TRACE(step);
    PowerCut();
    Forget(doomed_);
    const absl::StatusCode open = store_->OpenBlob(Doomed()).status().code();
    // Still quarantined (with its names), or gone (with them).
    if (open == absl::StatusCode::kDataLoss) {
      EXPECT_TRUE(store_->ResolveName("a").ok());
    } else {
      EXPECT_EQ(open, absl::StatusCode::kNotFound);
      EXPECT_FALSE(store_->ResolveName("a").ok());
    }
    ExpectAcknowledgedIntact();
    ExpectConsistent(true, /*quarantined=*/1);
    if (!crashed || HasFailure()) {
      EXPECT_TRUE(status.ok()) << status;
      RecordSteps(step);
      break;
    }
  }
}

// Each blob stored as a directory of files, and as one record.
INSTANTIATE_TEST_SUITE_P(Shapes, FileStoreDeleteFaultTest, ::testing::Bool(),
                         ShapeName);

}  // namespace
}  // namespace verity::server
