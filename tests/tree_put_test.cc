// A Put of a tree manifest (PutHeader.tree_manifest) against a real verityd:
// stored when every file's blob is stored with the size it lists; refused,
// with nothing stored, when one is missing or of another size, or when the
// manifest breaks a rule (an escaping symlink, a ".." path, bytes that do not
// parse); an ordinary Put of the same bytes is not checked.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/manifest/tree_manifest.h"
#include "lib/testing/test_blob.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

class TreePutTest : public ::testing::Test {
 protected:
  void SetUp() override { server_ = TestServer::Start(); }

  // A file entry for `data`, put first if `store`.
  TreeEntry FileOf(const std::string& path, const std::string& data,
                   bool store = true) {
    if (store) EXPECT_TRUE(PutBlob(server_->stub(), data).ok());
    return TreeEntry::File(path, *ParseDigest(DigestOf(data)), data.size());
  }

  absl::StatusOr<v1::PutResponse> PutTree(const std::string& manifest,
                                          bool flagged = true) {
    v1::PutHeader header;
    header.set_tree_manifest(flagged);
    return PutWithHeader(server_->stub(), header, manifest);
  }

  // Whether a blob with `data` as content is stored.
  bool Stored(const std::string& data) {
    return ReadBlob(server_->stub(), DigestOf(data)).status.ok();
  }

  std::unique_ptr<TestServer> server_;
};

TEST_F(TreePutTest, StoredWhenEveryFileIs) {
  const std::string manifest =
      *EncodeTreeManifest({TreeEntry::Directory("d"),
                           FileOf("d/a", MakeData(5000, 1)), FileOf("b", "")});
  absl::StatusOr<v1::PutResponse> put = PutTree(manifest);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->info().digest(), DigestOf(manifest));
}

TEST_F(TreePutTest, AMissingFileStoresNothing) {
  const std::string manifest =
      *EncodeTreeManifest({FileOf("a", MakeData(100, 2)),
                           FileOf("missing", MakeData(100, 3), false)});
  absl::StatusOr<v1::PutResponse> put = PutTree(manifest);
  EXPECT_EQ(put.status().code(), StatusCode::kFailedPrecondition)
      << put.status();
  EXPECT_NE(put.status().message().find("\"missing\""), std::string::npos)
      << put.status();
  EXPECT_FALSE(Stored(manifest));
  // Unflagged, the same bytes are an ordinary blob.
  EXPECT_TRUE(PutTree(manifest, false).ok());
}

TEST_F(TreePutTest, ASizeThatDisagreesStoresNothing) {
  TreeEntry lying = FileOf("a", MakeData(100, 4));
  lying.size = 99;
  const std::string manifest = *EncodeTreeManifest({lying});
  absl::StatusOr<v1::PutResponse> put = PutTree(manifest);
  EXPECT_EQ(put.status().code(), StatusCode::kInvalidArgument) << put.status();
  EXPECT_NE(put.status().message().find("says 99 bytes"), std::string::npos)
      << put.status();
  EXPECT_FALSE(Stored(manifest));
}

TEST_F(TreePutTest, TwoSizesForOneBlobStoreNothing) {
  const TreeEntry a = FileOf("a", MakeData(100, 5));
  TreeEntry b = a;
  b.path = "b";
  b.size = 101;
  const std::string manifest = *EncodeTreeManifest({a, b});
  absl::StatusOr<v1::PutResponse> put = PutTree(manifest);
  EXPECT_EQ(put.status().code(), StatusCode::kInvalidArgument) << put.status();
  EXPECT_NE(put.status().message().find("different sizes"), std::string::npos)
      << put.status();
  EXPECT_FALSE(Stored(manifest));
}

// A tree named again by SetName (an older release) is checked as a tree Put
// is: a file deleted since (garbage collection, rm --force) refuses it.
TEST_F(TreePutTest, SetNameOfATreeNeedsItsFiles) {
  const std::string data = MakeData(3000, 7);
  const std::string manifest = *EncodeTreeManifest({FileOf("a", data)});
  ASSERT_TRUE(PutTree(manifest).ok());
  v1::SetNameRequest set;
  set.set_name("release");
  set.set_digest(DigestOf(manifest));
  {
    grpc::ClientContext context;
    v1::BlobInfo info;
    ASSERT_TRUE(server_->stub().SetName(&context, set, &info).ok());
  }
  v1::DeleteRequest remove;
  remove.set_digest(DigestOf(data));
  remove.set_force(true);
  {
    grpc::ClientContext context;
    v1::DeleteResponse response;
    ASSERT_TRUE(server_->stub().Delete(&context, remove, &response).ok());
  }
  grpc::ClientContext context;
  v1::BlobInfo info;
  const grpc::Status named = server_->stub().SetName(&context, set, &info);
  EXPECT_EQ(named.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << named.error_message();
  EXPECT_NE(named.error_message().find("is not stored"), std::string::npos)
      << named.error_message();
}

// Bytes the encoder would refuse to write, made by hand as an attacker
// would: each refused, nothing stored.
TEST_F(TreePutTest, AManifestThatBreaksARuleStoresNothing) {
  const std::string magic = "verityd tree v1\n";
  const auto entry = [](char type, const std::string& path,
                        const std::string& rest) {
    return std::string(1, type) + std::string(1, path.size()) +
           std::string(1, '\0') + path + rest;
  };
  const auto count = [](char n) {
    return std::string(1, n) + std::string(3, '\0');
  };
  const std::string link_up =
      magic + count(1) + entry(3, "l", std::string("\x02\x00..", 4));
  const std::string dot_dot =
      magic + count(2) + entry(2, "a", "") + entry(2, "a/..", "");
  for (const std::string& bad :
       {link_up, dot_dot, magic + count(1), std::string("not a manifest")}) {
    absl::StatusOr<v1::PutResponse> put = PutTree(bad);
    EXPECT_EQ(put.status().code(), StatusCode::kInvalidArgument)
        << put.status();
    EXPECT_FALSE(Stored(bad));
  }
}

}  // namespace
}  // namespace verity::testing
