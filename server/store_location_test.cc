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
  EXPECT_EQ(ParseStoreLocation("file://data")->dir, "data");
}

TEST(StoreLocationTest, RefusesWhatNamesNoStore) {
  for (const char* bad : {"", "file://", "ftp://host/x", "http://bucket"}) {
    const absl::StatusOr<StoreLocation> location = ParseStoreLocation(bad);
    EXPECT_EQ(location.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_NE(location.status().message().find("--store"), std::string::npos);
  }
}

}  // namespace
}  // namespace verity::server
