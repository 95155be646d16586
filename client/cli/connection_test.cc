// The connection flags: what is refused, and how they map onto the SDK's
// options. Connecting is left to the command tests and tests/.

#include "client/cli/connection.h"

#include <fstream>

#include "gtest/gtest.h"

namespace verity::client {
namespace {

using ::absl::StatusCode;

TEST(ConnectionTest, PlaintextClientNeedsNoFiles) {
  ConnectionOptions options;
  options.server = "127.0.0.1:1";
  EXPECT_TRUE(CreateClient(options).ok());
  EXPECT_FALSE(ToClientOptions(options).tls.has_value());
}

TEST(ConnectionTest, TlsFlagsNamePemFiles) {
  ConnectionOptions options;
  options.tls_ca_file = "ca.pem";
  options.tls_cert_file = "cert.pem";
  options.tls_key_file = "key.pem";
  options.timeout = absl::Seconds(7);
  const sdk::ClientOptions client = ToClientOptions(options);
  ASSERT_TRUE(client.tls.has_value());
  EXPECT_EQ(client.tls->root_certs_file, "ca.pem");
  EXPECT_EQ(client.tls->cert_chain_file, "cert.pem");
  EXPECT_EQ(client.tls->private_key_file, "key.pem");
  EXPECT_EQ(client.rpc_timeout, absl::Seconds(7));
}

TEST(ConnectionTest, MissingPemFilesAreNotFound) {
  ConnectionOptions options;
  options.tls_ca_file = ::testing::TempDir() + "/no-such-ca.pem";
  EXPECT_EQ(CreateClient(options).status().code(), StatusCode::kNotFound);
  const std::string ca = ::testing::TempDir() + "/ca.pem";
  std::ofstream(ca) << "-----BEGIN CERTIFICATE-----\n";
  options.tls_ca_file = ca;
  EXPECT_TRUE(CreateClient(options).ok());  // PEM is parsed at handshake
}

TEST(ConnectionTest, InvalidCombinations) {
  ConnectionOptions options;
  options.tls_cert_file = "c.pem";
  options.tls_key_file = "k.pem";
  EXPECT_EQ(ValidateConnectionOptions(options).code(),
            StatusCode::kInvalidArgument);
  options = ConnectionOptions();
  options.tls_ca_file = "ca.pem";
  options.tls_cert_file = "c.pem";
  EXPECT_EQ(ValidateConnectionOptions(options).code(),
            StatusCode::kInvalidArgument);
  options = ConnectionOptions();
  options.timeout = absl::Seconds(-1);
  EXPECT_EQ(ValidateConnectionOptions(options).code(),
            StatusCode::kInvalidArgument);
  options = ConnectionOptions();
  options.server.clear();
  EXPECT_EQ(CreateClient(options).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace verity::client
