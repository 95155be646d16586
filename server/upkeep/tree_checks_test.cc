// What a Put's checks mark: a blob a Put found stored is marked used, and
// one gone by the time of the mark is a retry, never "already present".

#include "server/upkeep/tree_checks.h"

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/upkeep/testing/upkeep_stores.h"

namespace verity::server {
namespace {

class MarkFoundUsedTest : public UpkeepTest {
 protected:
  void SetUp() override { Open(1); }
};

TEST_P(MarkFoundUsedTest, MarksAStoredBlobAndRetriesAGoneOne) {
  const TestBlob stored = Put("found stored");
  const absl::Time later = absl::Now() + absl::Hours(48);
  ASSERT_TRUE(
      MarkFoundUsed(*store_, stored.digest, later, absl::Hours(1)).ok());
  const absl::StatusOr<absl::Time> used = store_->LastUsed(stored.digest);
  ASSERT_TRUE(used.ok()) << used.status();
  EXPECT_GE(*used, later - absl::Seconds(1));

  ASSERT_TRUE(store_->DeleteBlob(stored.digest).ok());
  const absl::Status gone =
      MarkFoundUsed(*store_, stored.digest, later, absl::Hours(1));
  EXPECT_TRUE(absl::IsUnavailable(gone)) << gone;
}

INSTANTIATE_TEST_SUITE_P(Stores, MarkFoundUsedTest,
                         ::testing::Values(StoreFactory(NewTestFileStore),
                                           StoreFactory(NewTestS3Store)));

}  // namespace
}  // namespace verity::server
