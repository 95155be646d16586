// ParseRoleFile and ValidateToken: what a role file may hold, and errors that
// name the line but never its value.

#include "server/auth/role_file.h"

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(RoleFileTest, GrantsInOrderSkippingCommentsAndBlankLines) {
  absl::StatusOr<std::vector<RoleGrant>> grants = ParseRoleFile(
      "# verityd tokens\n"
      "read  reader-token-0123456789\n"
      "\n"
      "  write\twriter-token-0123456789  \n"
      "admin spiffe://cluster/ns/ops/sa/admin\r\n"
      "   # indented comment\n");
  ASSERT_TRUE(grants.ok()) << grants.status();
  ASSERT_EQ(grants->size(), 3u);
  EXPECT_EQ((*grants)[0].role, Role::kRead);
  EXPECT_EQ((*grants)[0].value, "reader-token-0123456789");
  EXPECT_EQ((*grants)[0].line, 2);
  EXPECT_EQ((*grants)[1].role, Role::kWrite);
  EXPECT_EQ((*grants)[1].value, "writer-token-0123456789");
  EXPECT_EQ((*grants)[2].role, Role::kAdmin);
  EXPECT_EQ((*grants)[2].value, "spiffe://cluster/ns/ops/sa/admin");
  EXPECT_EQ((*grants)[2].line, 5);
  EXPECT_TRUE(ParseRoleFile("").ok());
}

TEST(RoleFileTest, ErrorsNameTheLineAndNotTheSecret) {
  const char* bad[] = {
      "read\n",                             // no value
      "owner s3cr3t-s3cr3t-s3cr3t\n",       // unknown role
      "read s3cr3t-s3cr3t-s3cr3t extra\n",  // a space in the value
      "read s3cr3t-s3cr3t-s3cr3t\nread s3cr3t-s3cr3t-s3cr3t\n",  // twice
      "READ s3cr3t-s3cr3t-s3cr3t\n",  // roles are lower case
  };
  for (const char* text : bad) {
    absl::StatusOr<std::vector<RoleGrant>> grants = ParseRoleFile(text);
    ASSERT_FALSE(grants.ok()) << text;
    EXPECT_EQ(grants.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(grants.status().message().find("line "), absl::string_view::npos);
    EXPECT_EQ(grants.status().message().find("s3cr3t"), absl::string_view::npos)
        << grants.status();
  }
  EXPECT_NE(ParseRoleFile(
                "# ok\nread s3cr3t-s3cr3t-s3cr3t\nread s3cr3t-s3cr3t-s3cr3t\n")
                .status()
                .message()
                .find("line 3"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace verity::server
