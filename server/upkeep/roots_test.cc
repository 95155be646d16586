// MarkReachable on the file store and the S3 store (over FakeS3): every
// retained version of every name and each file of a version that is a tree
// are reached, nothing else; a blob that only begins as a manifest reaches
// nothing more; a tree that cannot be read fails the mark.

#include "server/upkeep/roots.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/manifest/tree_manifest.h"
#include "server/upkeep/testing/upkeep_stores.h"

namespace verity::server {
namespace {

class RootsTest : public UpkeepTest {
 protected:
  void SetUp() override { Open(5); }
};

TEST_P(RootsTest, ReachesEveryVersionAndTheFilesOfItsTrees) {
  const TestBlob f1 = Put("file one");
  const TestBlob f2 = Put("file two");
  const TestBlob f3 = Put("file three, named by nothing");
  const TestBlob t1 = PutTree({{"a", f1}});
  const TestBlob t2 = PutTree({{"a", f2}, {"doc", f1}});
  const TestBlob lookalike =
      Put(absl::StrCat(kTreeManifestMagic, "but not a manifest"));
  Name("rel", t1);
  Name("rel", t2);
  Name("other", lookalike);

  const absl::StatusOr<ReachableBlobs> reached = MarkReachable(*store_);
  ASSERT_TRUE(reached.ok()) << reached.status();
  EXPECT_EQ(reached->size(), 5u);
  EXPECT_EQ(reached->trees(), 2u);
  EXPECT_EQ(reached->Find(f3.digest), nullptr);
  const RootPath* path = reached->Find(t1.digest);
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(DescribeRootPath(*path), "name \"rel\" (version 1 of its history)");
  path = reached->Find(f2.digest);
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(DescribeRootPath(*path),
            "name \"rel\" (version 0 of its history), file a of its tree");
  EXPECT_NE(reached->Find(f1.digest), nullptr);
  EXPECT_NE(reached->Find(lookalike.digest), nullptr);

  // A file of a tree that is gone is still reached; a version that is gone
  // reaches nothing more.
  ASSERT_TRUE(store_->DeleteBlob(f2.digest).ok());
  EXPECT_NE(MarkReachable(*store_)->Find(f2.digest), nullptr);
}

TEST_P(RootsTest, ATreeThatCannotBeReadFailsTheMark) {
  const TestBlob file = Put("a file");
  const TestBlob tree = PutTree({{"f", file}});
  Name("rel", tree);
  ASSERT_TRUE(store_->Quarantine(tree.digest, "test").ok());
  const absl::StatusOr<ReachableBlobs> reached = MarkReachable(*store_);
  EXPECT_TRUE(absl::IsDataLoss(reached.status())) << reached.status();
  EXPECT_TRUE(absl::StrContains(reached.status().message(), "\"rel\""))
      << reached.status();
}

TEST_P(RootsTest, NoNamesReachNothing) {
  Put("alone");
  const absl::StatusOr<ReachableBlobs> reached = MarkReachable(*store_);
  ASSERT_TRUE(reached.ok()) << reached.status();
  EXPECT_EQ(reached->size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Stores, RootsTest,
                         ::testing::Values(StoreFactory(NewTestFileStore),
                                           StoreFactory(NewTestS3Store)));

}  // namespace
}  // namespace verity::server
