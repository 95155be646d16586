// Channel options: what is refused up front, and where PEM values come from.
// Connecting, TLS included, is tested against a real server in tests/sdk.

#include "client/sdk/channel.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace verity::client {
namespace {

using ::absl::StatusCode;

sdk::ClientOptions Options(std::string target) {
  sdk::ClientOptions options;
  options.target = std::move(target);
  return options;
}

TEST(ChannelTest, PlaintextTargets) {
  for (const char* target :
       {"127.0.0.1:1", "dns:///localhost:1", "unix:/nonexistent"}) {
    EXPECT_TRUE(CreateClientChannel(Options(target)).ok()) << target;
  }
}

TEST(ChannelTest, RefusedOptions) {
  EXPECT_EQ(CreateClientChannel(Options("")).status().code(),
            StatusCode::kInvalidArgument);
  sdk::ClientOptions options = Options("h:1");
  options.max_message_bytes = 0;
  EXPECT_EQ(CreateClientChannel(options).status().code(),
            StatusCode::kInvalidArgument);
  options = Options("h:1");
  options.rpc_timeout = absl::Seconds(-1);
  EXPECT_EQ(CreateClientChannel(options).status().code(),
            StatusCode::kInvalidArgument);
  for (int window : {0, (64 << 10) - 1, (1 << 30) + 1}) {
    options = Options("h:1");
    options.receive_window_bytes = window;
    EXPECT_EQ(CreateClientChannel(options).status().code(),
              StatusCode::kInvalidArgument)
        << window;
  }
  for (int window : {64 << 10, 1 << 30}) {
    options.receive_window_bytes = window;
    EXPECT_TRUE(CreateClientChannel(options).ok()) << window;
  }
}

TEST(ChannelTest, BearerTokensOnlyOverTlsOrToLoopback) {
  constexpr char kToken[] = "token-0123456789abcdef";
  for (const char* target :
       {"127.0.0.1:1", "dns:///localhost:1", "unix:/nonexistent", "[::1]:1"}) {
    sdk::ClientOptions options = Options(target);
    options.bearer_token = kToken;
    EXPECT_TRUE(CreateClientChannel(options).ok()) << target;
  }
  for (const char* target : {"verityd:50051", "dns:///verityd:50051"}) {
    sdk::ClientOptions options = Options(target);
    options.bearer_token = kToken;
    const absl::Status refused = CreateClientChannel(options).status();
    EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << target;
    EXPECT_EQ(refused.message().find(kToken), absl::string_view::npos);
    options.tls.emplace();
    EXPECT_TRUE(CreateClientChannel(options).ok()) << target;
  }
  sdk::ClientOptions malformed = Options("127.0.0.1:1");
  malformed.bearer_token = "token with spaces 0123";
  EXPECT_EQ(CreateClientChannel(malformed).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ChannelTest, PemValuesInlineOrFromFiles) {
  const std::string ca = ::testing::TempDir() + "/channel_test_ca.pem";
  std::ofstream(ca) << "-----BEGIN CERTIFICATE-----\n";
  sdk::ClientOptions options = Options("localhost:1");
  options.tls.emplace();
  EXPECT_TRUE(CreateClientChannel(options).ok());  // default roots
  options.tls->root_certs_file = ca;
  EXPECT_TRUE(CreateClientChannel(options).ok());
  options.tls->root_certs_pem = "-----BEGIN CERTIFICATE-----\n";
  EXPECT_EQ(CreateClientChannel(options).status().code(),
            StatusCode::kInvalidArgument);  // both
  options.tls->root_certs_file.clear();
  options.tls->cert_chain_pem = "chain";
  EXPECT_EQ(CreateClientChannel(options).status().code(),
            StatusCode::kInvalidArgument);  // no key
  options.tls->private_key_file = ::testing::TempDir() + "/no-such-key.pem";
  EXPECT_EQ(CreateClientChannel(options).status().code(),
            StatusCode::kNotFound);
  options.tls->private_key_file.clear();
  options.tls->private_key_pem = "key";
  EXPECT_TRUE(CreateClientChannel(options).ok());  // checked at handshake
}

}  // namespace
}  // namespace verity::client
