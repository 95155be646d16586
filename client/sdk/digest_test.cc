// sdk::Digest parses and prints exactly what `fsverity digest` prints.

#include "verity/digest.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace verity::sdk {
namespace {

TEST(DigestTest, ParseAndPrint) {
  const std::string hex(64, 'a');
  absl::StatusOr<Digest> digest = Digest::Parse("sha256:" + hex);
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(digest->algorithm(), DigestAlgorithm::kSha256);
  EXPECT_EQ(digest->bytes(), std::string(32, '\xaa'));
  EXPECT_EQ(digest->ToString(), "sha256:" + hex);
  absl::StatusOr<Digest> upper =
      Digest::Parse("sha512:" + std::string(128, 'F'));
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(upper->ToString(), "sha512:" + std::string(128, 'f'));
}

TEST(DigestTest, RejectsMalformedText) {
  for (const std::string& text : std::vector<std::string>{
           "", "sha256:", "sha256:" + std::string(63, 'a'),
           "md5:" + std::string(32, 'a'), "sha256:" + std::string(64, 'g')}) {
    EXPECT_EQ(Digest::Parse(text).status().code(),
              absl::StatusCode::kInvalidArgument)
        << text;
  }
}

TEST(DigestTest, FromBytes) {
  absl::StatusOr<Digest> digest =
      Digest::FromBytes(DigestAlgorithm::kSha512, std::string(64, '\x01'));
  ASSERT_TRUE(digest.ok());
  std::string hex;
  for (int i = 0; i < 64; ++i) hex += "01";
  EXPECT_EQ(*digest, *Digest::Parse("sha512:" + hex));
  EXPECT_NE(*digest, *Digest::Parse("sha512:" + std::string(128, '0')));
  EXPECT_EQ(
      Digest::FromBytes(DigestAlgorithm::kSha256, "short").status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      Digest::FromBytes(static_cast<DigestAlgorithm>(9), std::string(32, '\0'))
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace verity::sdk
