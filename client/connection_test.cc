// Option validation and credential loading; connecting is left to the
// integration tests in tests/.

#include "client/connection.h"

#include <fstream>

#include "gtest/gtest.h"

namespace verity::client {
namespace {

using ::absl::StatusCode;

TEST(ConnectionTest, PlaintextChannelNeedsNoFiles) {
  ConnectionOptions options;
  options.server = "127.0.0.1:1";
  EXPECT_TRUE(CreateChannel(options).ok());
  EXPECT_TRUE(CreateStub(options).ok());
}

TEST(ConnectionTest, MissingPemFilesAreNotFound) {
  ConnectionOptions options;
  options.tls_ca_file = ::testing::TempDir() + "/no-such-ca.pem";
  EXPECT_EQ(CreateChannel(options).status().code(), StatusCode::kNotFound);
}

TEST(ConnectionTest, TlsChannelFromPemFiles) {
  // gRPC checks the PEM contents only at the handshake.
  const std::string ca = ::testing::TempDir() + "/ca.pem";
  std::ofstream(ca) << "-----BEGIN CERTIFICATE-----\n";
  ConnectionOptions options;
  options.tls_ca_file = ca;
  EXPECT_TRUE(CreateChannel(options).ok());
  options.tls_cert_file = ca;
  options.tls_key_file = ::testing::TempDir() + "/no-such-key.pem";
  EXPECT_EQ(CreateChannel(options).status().code(), StatusCode::kNotFound);
}

TEST(ConnectionTest, InvalidCombinations) {
  ConnectionOptions options;
  options.tls_cert_file = "c.pem";
  options.tls_key_file = "k.pem";
  EXPECT_EQ(ValidateConnectionOptions(options).code(),
            StatusCode::kInvalidArgument);
  options = ConnectionOptions();
  options.timeout = absl::Seconds(-1);
  EXPECT_EQ(ValidateConnectionOptions(options).code(),
            StatusCode::kInvalidArgument);
  options = ConnectionOptions();
  options.server.clear();
  EXPECT_EQ(CreateChannel(options).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ConnectionTest, DeadlineFollowsTheTimeout) {
  ConnectionOptions options;
  grpc::ClientContext unlimited;
  options.timeout = absl::ZeroDuration();
  ApplyDeadline(options, &unlimited);
  EXPECT_EQ(unlimited.deadline(), std::chrono::system_clock::time_point::max());
  grpc::ClientContext limited;
  options.timeout = absl::Seconds(30);
  ApplyDeadline(options, &limited);
  const auto left = limited.deadline() - std::chrono::system_clock::now();
  EXPECT_GT(left, std::chrono::seconds(25));
  EXPECT_LE(left, std::chrono::seconds(30));
}

}  // namespace
}  // namespace verity::client
