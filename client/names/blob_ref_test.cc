// Digest-versus-name detection and request filling.

#include "client/names/blob_ref.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity::client {
namespace {

const std::string kHex(64, 'a');

TEST(BlobRefTest, DigestsAreDigests) {
  absl::StatusOr<BlobRef> ref = ParseBlobRef("sha256:" + kHex);
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(ref->digest.has_value());
  EXPECT_EQ(ref->digest->algorithm, HashAlgorithm::kSha256);
  EXPECT_EQ(ref->ToString(), "sha256:" + kHex);

  // Upper-case hex is accepted and canonicalized for the server.
  ref = ParseBlobRef("sha512:" + std::string(128, 'B'));
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(ref->digest.has_value());
  EXPECT_EQ(ref->ToString(), "sha512:" + std::string(128, 'b'));
  verity::v1::ReadRequest request;
  ref->SetIn(&request);
  EXPECT_EQ(request.digest(), "sha512:" + std::string(128, 'b'));
}

TEST(BlobRefTest, EverythingElseIsAName) {
  const std::vector<std::string> names = {"photos/cat.jpg",
                                          "sha256:abc",
                                          "sha256:" + kHex + "0",
                                          "sha1:" + kHex,
                                          "md5:x",
                                          ":",
                                          kHex};
  for (const std::string& text : names) {
    absl::StatusOr<BlobRef> ref = ParseBlobRef(text);
    ASSERT_TRUE(ref.ok()) << text;
    EXPECT_FALSE(ref->digest.has_value()) << text;
    EXPECT_EQ(ref->name, text);
    verity::v1::DeleteRequest request;
    ref->SetIn(&request);
    EXPECT_EQ(request.name(), text);
    EXPECT_TRUE(request.digest().empty());
  }
  EXPECT_EQ(ParseBlobRef("").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace verity::client
