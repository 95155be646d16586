// --store's forms, and the ones refused.

#include "server/store_location.h"

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(StoreLocationTest, DirectoriesAndFileUrls) {
  EXPECT_EQ(ParseStoreLocation("./verityd-data")->dir, "./verityd-data");
  EXPECT_EQ(ParseStoreLocation("/var/lib/verityd")->dir, "/var/lib/verityd");
  EXPECT_EQ(ParseStoreLocation("file:///var/lib/verityd")->dir,
            "/var/lib/verityd");
  EXPECT_EQ(ParseStoreLocation("file://data")->kind,
            StoreLocation::Kind::kFile);
}

TEST(StoreLocationTest, Buckets) {
  absl::StatusOr<StoreLocation> s3 = ParseStoreLocation("s3://my-bucket.1");
  ASSERT_TRUE(s3.ok()) << s3.status();
  EXPECT_EQ(s3->kind, StoreLocation::Kind::kS3);
  EXPECT_EQ(s3->bucket, "my-bucket.1");
  EXPECT_EQ(s3->prefix, "");
  EXPECT_EQ(ParseStoreLocation("s3://b12/")->prefix, "");
  EXPECT_EQ(ParseStoreLocation("s3://b12/team/verityd")->prefix,
            "team/verityd/");
  EXPECT_EQ(ParseStoreLocation("s3://b12/team/verityd/")->prefix,
            "team/verityd/");
}

TEST(StoreLocationTest, RefusesWhatNamesNoStore) {
  for (const char* bad :
       {"", "file://", "ftp://host/x", "http://bucket", "s3://", "s3://ab",
        "s3://Upper", "s3://-dash", "s3://under_score/x"}) {
    const absl::StatusOr<StoreLocation> location = ParseStoreLocation(bad);
    EXPECT_EQ(location.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_NE(location.status().message().find("--store"), std::string::npos);
  }
}

}  // namespace
}  // namespace verity::server
