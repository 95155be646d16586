// Authorizer: every kind of caller against every role, reloads, and messages
// that never carry a token.

#include "server/auth/authorizer.h"

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace verity::server {
namespace {

using ::absl::StatusCode;

constexpr char kReadToken[] = "read-token-0123456789";
constexpr char kWriteToken[] = "write-token-0123456789";
constexpr char kAdminToken[] = "admin-token-0123456789";

class AuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = ::testing::TempDir();
    options_.tokens_file = dir + "/tokens";
    options_.identities_file = dir + "/identities";
    Write(options_.tokens_file,
          absl::StrCat("# tokens\nread ", kReadToken, "\nwrite ", kWriteToken,
                       "\nadmin ", kAdminToken, "\n"));
    Write(options_.identities_file,
          "read reader.example.com\nwrite spiffe://c/ns/app/sa/writer\n");
    absl::StatusOr<std::unique_ptr<Authorizer>> authorizer =
        Authorizer::Create(options_);
    ASSERT_TRUE(authorizer.ok()) << authorizer.status();
    authorizer_ = *std::move(authorizer);
  }

  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
  }

  static CallerCredentials WithToken(absl::string_view token,
                                     bool secure = true) {
    CallerCredentials caller;
    caller.authorization.push_back(absl::StrCat("Bearer ", token));
    caller.secure_transport = secure;
    return caller;
  }

  StatusCode Code(const CallerCredentials& caller, Role needed) const {
    const absl::Status status = authorizer_->Check(caller, needed, "Put");
    for (const char* token : {kReadToken, kWriteToken, kAdminToken}) {
      EXPECT_EQ(status.message().find(token), absl::string_view::npos);
    }
    return status.code();
  }

  AuthOptions options_;
  std::unique_ptr<Authorizer> authorizer_;
};

TEST_F(AuthorizerTest, EachRoleIncludesTheOnesBefore) {
  const struct {
    const char* token;
    Role role;
  } holders[] = {{kReadToken, Role::kRead},
                 {kWriteToken, Role::kWrite},
                 {kAdminToken, Role::kAdmin}};
  for (const auto& holder : holders) {
    for (Role needed : {Role::kRead, Role::kWrite, Role::kAdmin}) {
      EXPECT_EQ(Code(WithToken(holder.token), needed),
                Includes(holder.role, needed) ? StatusCode::kOk
                                              : StatusCode::kPermissionDenied)
          << holder.token << " " << RoleName(needed);
    }
  }
  const absl::Status denied =
      authorizer_->Check(WithToken(kReadToken), Role::kWrite, "Put");
  EXPECT_EQ(denied.message(), "Put needs the write role; the caller has read");
  EXPECT_EQ(authorizer_->Summary(), "3 tokens, 2 identities");
}

TEST_F(AuthorizerTest, MissingUnknownAndMalformedCredentials) {
  EXPECT_EQ(Code(CallerCredentials(), Role::kRead),
            StatusCode::kUnauthenticated);
  EXPECT_EQ(Code(WithToken("not-a-known-token-0000"), Role::kRead),
            StatusCode::kUnauthenticated);
  CallerCredentials basic;
  basic.authorization.push_back("Basic dXNlcjpwYXNzd29yZA==");
  EXPECT_EQ(Code(basic, Role::kRead), StatusCode::kUnauthenticated);
  CallerCredentials twice = WithToken(kAdminToken);
  twice.authorization.push_back(absl::StrCat("Bearer ", kReadToken));
  EXPECT_EQ(Code(twice, Role::kRead), StatusCode::kUnauthenticated);
  CallerCredentials lower = WithToken(kAdminToken);
  lower.authorization[0] = absl::StrCat("bearer ", kAdminToken);
  EXPECT_EQ(Code(lower, Role::kAdmin), StatusCode::kOk);
}

TEST_F(AuthorizerTest, TokensOnlyOverTlsOrFromLoopback) {
  CallerCredentials plain = WithToken(kAdminToken, /*secure=*/false);
  EXPECT_EQ(Code(plain, Role::kRead), StatusCode::kUnauthenticated);
  EXPECT_NE(authorizer_->Check(plain, Role::kRead, "Read")
                .message()
                .find("only over TLS or from loopback"),
            absl::string_view::npos);
  plain.loopback_peer = true;
  EXPECT_EQ(Code(plain, Role::kAdmin), StatusCode::kOk);
}

TEST_F(AuthorizerTest, CertificateIdentities) {
  CallerCredentials reader;
  reader.secure_transport = true;
  reader.identities = {"CN-not-listed", "reader.example.com"};
  EXPECT_EQ(Code(reader, Role::kRead), StatusCode::kOk);
  EXPECT_EQ(Code(reader, Role::kWrite), StatusCode::kPermissionDenied);
  CallerCredentials stranger = reader;
  stranger.identities = {"stranger.example.com"};
  EXPECT_EQ(Code(stranger, Role::kRead), StatusCode::kPermissionDenied);
  // A token and a certificate: the larger role counts.
  CallerCredentials both = WithToken(kReadToken);
  both.identities = {"spiffe://c/ns/app/sa/writer"};
  EXPECT_EQ(Code(both, Role::kWrite), StatusCode::kOk);
  EXPECT_EQ(Code(both, Role::kAdmin), StatusCode::kPermissionDenied);
}

TEST_F(AuthorizerTest, ReloadTakesEffectAtOnceAndKeepsTheOldGrantsOnError) {
  Write(options_.tokens_file, absl::StrCat("admin ", kWriteToken, "\n"));
  ASSERT_TRUE(authorizer_->Reload().ok());
  EXPECT_EQ(Code(WithToken(kReadToken), Role::kRead),
            StatusCode::kUnauthenticated);
  EXPECT_EQ(Code(WithToken(kWriteToken), Role::kAdmin), StatusCode::kOk);
  Write(options_.tokens_file, absl::StrCat("root ", kReadToken, "\n"));
  const absl::Status bad = authorizer_->Reload();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("line 1"), absl::string_view::npos) << bad;
  EXPECT_EQ(bad.message().find(kReadToken), absl::string_view::npos);
  EXPECT_EQ(Code(WithToken(kWriteToken), Role::kAdmin), StatusCode::kOk);
  Write(options_.tokens_file, "read short\n");
  EXPECT_EQ(authorizer_->Reload().code(), StatusCode::kInvalidArgument);
}

TEST_F(AuthorizerTest, CreateFailsOnAMissingOrBadFile) {
  AuthOptions missing;
  missing.tokens_file = ::testing::TempDir() + "/no-such-file";
  EXPECT_FALSE(Authorizer::Create(missing).ok());
  Write(options_.tokens_file, "write\n");
  EXPECT_EQ(Authorizer::Create(options_).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(AuthorizerDisabledTest, WithoutFilesEveryoneMayDoEverything) {
  absl::StatusOr<std::unique_ptr<Authorizer>> open =
      Authorizer::Create(AuthOptions());
  ASSERT_TRUE(open.ok());
  EXPECT_FALSE((*open)->enabled());
  EXPECT_TRUE((*open)->Check(CallerCredentials(), Role::kAdmin, "Delete").ok());
}

}  // namespace
}  // namespace verity::server
