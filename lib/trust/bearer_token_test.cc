// ValidateBearerToken: what a token may be.

#include "lib/trust/bearer_token.h"

#include "gtest/gtest.h"

namespace verity {
namespace {

TEST(BearerTokenTest, Token68OfSixteenOrMore) {
  EXPECT_TRUE(ValidateBearerToken("abcdefghijklmnop").ok());
  EXPECT_TRUE(ValidateBearerToken("Zm9vYmFyLWJhei1xdXV4LTA5~._+/-==").ok());
  for (const char* bad :
       {"short-token", "abcdefghijklmnop,", "abcdefgh=ijklmnop",
        "================", "abcdefghijklmnop\"", "abcdefgh ijklmnop",
        "abcdefghijklmnop\n", ""}) {
    const absl::Status status = ValidateBearerToken(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(status.message().find("abcdefgh"), absl::string_view::npos);
  }
}

}  // namespace
}  // namespace verity
