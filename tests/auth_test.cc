// Authorization against a real verityd: every RPC with no credentials, an
// unknown token, each role's token, a token removed by a reload, a token sent
// in plaintext from off loopback, and client certificate identities over
// mutual TLS, each with exactly the documented status; and a read-only token
// never changes the store.

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "proto/verity/v1/verity.grpc.pb.h"
#include "server/auth/role.h"
#include "tests/sdk/sdk_fixture.h"
#include "tests/testing/self_signed_cert.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;
using server::Role;

constexpr char kReadToken[] = "read-token-0123456789";
constexpr char kWriteToken[] = "write-token-0123456789";
constexpr char kAdminToken[] = "admin-token-0123456789";
constexpr char kUnknownToken[] = "unknown-token-0123456789";

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

enum class Call {
  kRead,
  kStat,
  kList,
  kHistory,
  kPut,
  kDeleteName,
  kDeleteBlob
};
constexpr Call kCalls[] = {Call::kRead,      Call::kStat, Call::kList,
                           Call::kHistory,   Call::kPut,  Call::kDeleteName,
                           Call::kDeleteBlob};

const char* CallName(Call call) {
  switch (call) {
    case Call::kRead:
      return "Read";
    case Call::kStat:
      return "Stat";
    case Call::kList:
      return "List";
    case Call::kHistory:
      return "History";
    case Call::kPut:
      return "Put";
    case Call::kDeleteName:
      return "Delete(name)";
    case Call::kDeleteBlob:
      return "Delete(digest)";
  }
  return "?";
}

// The documented role of each call.
Role Needed(Call call) {
  switch (call) {
    case Call::kPut:
    case Call::kDeleteName:
      return Role::kWrite;
    case Call::kDeleteBlob:
      return Role::kAdmin;
    default:
      return Role::kRead;
  }
}

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewTempDir();
    tokens_ = dir_ + "/tokens";
    WriteFile(tokens_,
              absl::StrCat("# test tokens\nread ", kReadToken, "\nwrite ",
                           kWriteToken, "\nadmin ", kAdminToken, "\n"));
  }

  sdk::ClientOptions ClientOptions(const std::string& token) const {
    sdk::ClientOptions options = FastRetryOptions(address_);
    options.bearer_token = token;
    options.tls = tls_;
    return options;
  }

  std::unique_ptr<sdk::Client> Client(const std::string& token) const {
    return *sdk::Client::Create(ClientOptions(token));
  }

  // A store holding `kept_` under the name "kept", put by the admin.
  void StartServer(server::ServerOptions options) {
    options.auth.tokens_file = tokens_;
    server_ = TestServer::Start(options);
    if (address_.empty()) address_ = server_->verityd().address();
    admin_ = Client(kAdminToken);
    kept_ = RandomBytes(10000, 1);
    Restore();
  }

  // Puts back what a successful call may have changed.
  void Restore() {
    sdk::PutOptions named;
    named.name = "kept";
    ASSERT_TRUE(PutString(*admin_, kept_, named).ok());
    const sdk::Digest fresh = sdk::Digest::Parse(DigestOf(kFresh)).value();
    const absl::Status gone = admin_->Delete(fresh);
    ASSERT_TRUE(gone.ok() || gone.code() == StatusCode::kNotFound) << gone;
  }

  static absl::StatusOr<sdk::PutResult> PutString(sdk::Client& client,
                                                  const std::string& data,
                                                  const sdk::PutOptions& opts) {
    auto at = std::make_shared<size_t>(0);
    return client.PutStream(
        [&data, at](absl::Span<uint8_t> buffer) -> absl::StatusOr<size_t> {
          const size_t n = std::min(buffer.size(), data.size() - *at);
          std::copy_n(data.data() + *at, n, buffer.data());
          *at += n;
          return n;
        },
        opts);
  }

  StatusCode Run(sdk::Client& client, Call call) {
    const sdk::Digest kept = sdk::Digest::Parse(DigestOf(kept_)).value();
    absl::Status status;
    switch (call) {
      case Call::kRead:
        status = client.ReadRange(kept, 0, 100).status();
        break;
      case Call::kStat:
        status = client.Stat(kept).status();
        break;
      case Call::kList:
        status = client.ListAll().status();
        break;
      case Call::kHistory:
        status = client.History("kept").status();
        break;
      case Call::kPut:
        status = PutString(client, kFresh, {}).status();
        break;
      case Call::kDeleteName:
        status = client.DeleteName("kept");
        break;
      case Call::kDeleteBlob:
        // Named "kept": without force, refused whoever asks.
        status = client.Delete(kept, /*force=*/true);
        break;
    }
    for (const char* token : {kReadToken, kWriteToken, kAdminToken}) {
      EXPECT_EQ(status.message().find(token), absl::string_view::npos)
          << status;
    }
    Restore();
    return status.code();
  }

  // What the store holds, as the admin lists it.
  std::vector<std::string> Contents() {
    std::vector<std::string> contents;
    const absl::StatusOr<std::vector<sdk::BlobInfo>> blobs = admin_->ListAll();
    EXPECT_TRUE(blobs.ok()) << blobs.status();
    if (!blobs.ok()) return contents;
    for (const sdk::BlobInfo& info : *blobs) {
      contents.push_back(absl::StrCat(info.digest.ToString(), " ",
                                      absl::StrJoin(info.names, ",")));
    }
    return contents;
  }

  void ExpectRole(sdk::Client& client, Role held, absl::string_view who) {
    for (Call call : kCalls) {
      const bool allowed = server::Includes(held, Needed(call));
      EXPECT_EQ(Run(client, call),
                allowed ? StatusCode::kOk : StatusCode::kPermissionDenied)
          << who << " " << CallName(call);
    }
  }

  void ExpectUnauthenticated(sdk::Client& client, absl::string_view who) {
    for (Call call : kCalls) {
      EXPECT_EQ(Run(client, call), StatusCode::kUnauthenticated)
          << who << " " << CallName(call);
    }
  }

  const std::string kFresh = RandomBytes(5000, 2);
  std::string dir_;
  std::string tokens_;
  std::string address_;
  std::optional<sdk::TlsOptions> tls_;
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<server::Verityd> tls_server_;
  std::unique_ptr<sdk::Client> admin_;
  std::string kept_;
};

TEST_F(AuthTest, EveryCallWithEveryToken) {
  StartServer({});
  ExpectUnauthenticated(*Client(""), "no token");
  ExpectUnauthenticated(*Client(kUnknownToken), "unknown token");
  ExpectRole(*Client(kReadToken), Role::kRead, "read");
  ExpectRole(*Client(kWriteToken), Role::kWrite, "write");
  ExpectRole(*Client(kAdminToken), Role::kAdmin, "admin");
}

TEST_F(AuthTest, AReadOnlyTokenNeverChangesTheStore) {
  StartServer({});
  const std::vector<std::string> before = Contents();
  std::unique_ptr<sdk::Client> reader = Client(kReadToken);
  const sdk::Digest kept = sdk::Digest::Parse(DigestOf(kept_)).value();
  sdk::PutOptions rename;
  rename.name = "kept";
  EXPECT_EQ(PutString(*reader, kFresh, rename).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(PutString(*reader, kept_, {}).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(reader->DeleteName("kept").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(reader->Delete(kept).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(Contents(), before);
  EXPECT_EQ(*reader->ReadRange(kept, 0, kept_.size()), kept_);
}

TEST_F(AuthTest, AReloadRemovesAndAddsTokensForTheNextCall) {
  StartServer({});
  std::unique_ptr<sdk::Client> writer = Client(kWriteToken);
  ASSERT_EQ(Run(*writer, Call::kPut), StatusCode::kOk);
  constexpr char kNewToken[] = "new-token-0123456789";
  WriteFile(tokens_,
            absl::StrCat("admin ", kAdminToken, "\nwrite ", kNewToken, "\n"));
  ASSERT_TRUE(server_->verityd().ReloadAuth().ok());
  EXPECT_EQ(server_->verityd().AuthSummary(), "2 tokens, 0 identities");
  // The same client, its connection still open.
  ExpectUnauthenticated(*writer, "removed write token");
  ExpectUnauthenticated(*Client(kReadToken), "removed read token");
  ExpectRole(*Client(kNewToken), Role::kWrite, "new write token");
  // A malformed file is refused and the grants stay.
  WriteFile(tokens_, "superuser whatever-0123456789\n");
  EXPECT_EQ(server_->verityd().ReloadAuth().code(),
            StatusCode::kInvalidArgument);
  ExpectRole(*Client(kNewToken), Role::kWrite, "new write token, kept");
}

// A non-loopback IPv4 address of this machine, if it has one.
std::optional<std::string> NonLoopbackAddress() {
  ifaddrs* addresses = nullptr;
  if (getifaddrs(&addresses) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* a = addresses; a != nullptr && !found; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    const in_addr address =
        reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr;
    if ((ntohl(address.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN];
    found = inet_ntop(AF_INET, &address, text, sizeof(text));
  }
  freeifaddrs(addresses);
  return found;
}

grpc::Status StatWithToken(const std::string& target,
                           const std::string& digest) {
  auto stub = v1::Verity::NewStub(
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.AddMetadata("authorization", absl::StrCat("Bearer ", kAdminToken));
  v1::StatRequest request;
  request.set_digest(digest);
  v1::BlobInfo info;
  return stub->Stat(&context, request, &info);
}

// ReadSmall and BatchRead are admitted as Read is: UNAUTHENTICATED without a
// known token, served to every role (each includes read).
TEST_F(AuthTest, ReadSmallAndBatchReadNeedAKnownToken) {
  StartServer({});
  auto stub = v1::Verity::NewStub(
      grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  const std::map<std::string, grpc::StatusCode> want = {
      {"", grpc::StatusCode::UNAUTHENTICATED},
      {kUnknownToken, grpc::StatusCode::UNAUTHENTICATED},
      {kReadToken, grpc::StatusCode::OK},
      {kWriteToken, grpc::StatusCode::OK},
      {kAdminToken, grpc::StatusCode::OK}};
  for (const auto& [token, code] : want) {
    grpc::ClientContext context;
    if (!token.empty()) {
      context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
    }
    v1::ReadRequest request;
    request.set_digest(DigestOf(kept_));
    request.set_length(100);
    v1::ReadResponse response;
    const grpc::Status status = stub->ReadSmall(&context, request, &response);
    EXPECT_EQ(status.error_code(), code) << "token '" << token << "'";
    EXPECT_EQ(response.data().size(),
              code == grpc::StatusCode::OK ? 4096u : 0u);

    grpc::ClientContext batch_context;
    if (!token.empty()) {
      batch_context.AddMetadata("authorization",
                                absl::StrCat("Bearer ", token));
    }
    v1::BatchReadRequest batch;
    batch.add_digests(DigestOf(kept_));
    v1::BatchReadResponse blobs;
    EXPECT_EQ(stub->BatchRead(&batch_context, batch, &blobs).error_code(), code)
        << "token '" << token << "'";
    EXPECT_EQ(blobs.blobs_size(), code == grpc::StatusCode::OK ? 1 : 0);
  }
}

TEST_F(AuthTest, TokensInPlaintextOnlyFromLoopback) {
  const std::optional<std::string> external = NonLoopbackAddress();
  if (!external.has_value()) GTEST_SKIP() << "no non-loopback address";
  server::ServerOptions options;
  options.listen = "0.0.0.0:0";
  options.allow_insecure = true;
  options.auth.tokens_file = tokens_;
  server_ = TestServer::Start(options);
  const int port = server_->verityd().port();
  const std::string digest = DigestOf("absent");
  const grpc::Status local =
      StatWithToken(absl::StrCat("127.0.0.1:", port), digest);
  EXPECT_EQ(local.error_code(), grpc::StatusCode::NOT_FOUND)
      << local.error_message();
  const grpc::Status remote =
      StatWithToken(absl::StrCat(*external, ":", port), digest);
  EXPECT_EQ(remote.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(remote.error_message().find("only over TLS or from loopback"),
            std::string::npos)
      << remote.error_message();
}

// Over mutual TLS: each client certificate's common name maps to a role; a
// trusted certificate with no role gets PERMISSION_DENIED, and a token adds
// to what the certificate grants.
TEST_F(AuthTest, ClientCertificateIdentities) {
  std::map<std::string, PemKeyPair> pems;
  std::string client_cas;
  for (const char* who :
       {"verityd", "cn-reader", "cn-writer", "cn-admin", "cn-stranger"}) {
    absl::StatusOr<PemKeyPair> pem = MakeSelfSignedCert(who);
    ASSERT_TRUE(pem.ok()) << pem.status();
    WriteFile(absl::StrCat(dir_, "/", who, ".crt"), pem->cert_pem);
    WriteFile(absl::StrCat(dir_, "/", who, ".key"), pem->key_pem);
    if (std::string(who) != "verityd") client_cas += pem->cert_pem;
    pems[who] = *pem;
  }
  WriteFile(dir_ + "/client-cas.pem", client_cas);
  WriteFile(dir_ + "/identities",
            "read cn-reader\nwrite cn-writer\nadmin cn-admin\n");
  // TestServer's own channel is plaintext: this one is started directly.
  server::ServerOptions options;
  options.tls_cert = dir_ + "/verityd.crt";
  options.tls_key = dir_ + "/verityd.key";
  options.tls_client_ca = dir_ + "/client-cas.pem";
  options.auth.identities_file = dir_ + "/identities";
  auto as = [&](const std::string& who) {
    sdk::TlsOptions& tls = tls_.emplace();
    tls.root_certs_pem = pems["verityd"].cert_pem;
    tls.cert_chain_pem = pems[who].cert_pem;
    tls.private_key_pem = pems[who].key_pem;
  };
  options.listen = "127.0.0.1:0";
  options.store.root = dir_ + "/store";
  options.auth.tokens_file = tokens_;
  absl::StatusOr<std::unique_ptr<server::Verityd>> verityd =
      server::Verityd::Start(options);
  ASSERT_TRUE(verityd.ok()) << verityd.status();
  (*verityd)->WaitUntilServing();
  tls_server_ = *std::move(verityd);
  address_ = tls_server_->address();
  as("cn-admin");
  admin_ = Client("");
  kept_ = RandomBytes(10000, 1);
  Restore();
  as("cn-reader");
  ExpectRole(*Client(""), Role::kRead, "reader certificate");
  as("cn-writer");
  ExpectRole(*Client(""), Role::kWrite, "writer certificate");
  as("cn-admin");
  ExpectRole(*Client(""), Role::kAdmin, "admin certificate");
  as("cn-stranger");
  ExpectRole(*Client(""), Role::kNone, "certificate without a role");
  ExpectRole(*Client(kWriteToken), Role::kWrite, "stranger with a token");
  as("cn-reader");
  ExpectRole(*Client(kAdminToken), Role::kAdmin, "reader with admin token");
  ExpectUnauthenticated(*Client(kUnknownToken), "reader, unknown token");
}

}  // namespace
}  // namespace verity::testing
