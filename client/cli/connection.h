// How the `verity` commands reach verityd: the connection flags every
// command takes, turned into an SDK client.

#ifndef VERITYD_CLIENT_CLI_CONNECTION_H_
#define VERITYD_CLIENT_CLI_CONNECTION_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "verity/client.h"

namespace verity::client {

// Plain value.
struct ConnectionOptions {
  // HOST:PORT, dns:///NAME:PORT for every replica, or any gRPC target such
  // as unix:/path.
  std::string server = "127.0.0.1:50051";
  // PEM file of the CA certificates to trust; setting it enables TLS. Empty
  // means plaintext.
  std::string tls_ca_file;
  // PEM client certificate chain and private key for mutual TLS: both or
  // neither, and only with tls_ca_file.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Sent as `authorization: Bearer TOKEN`: from --token-file, else
  // $VERITY_TOKEN; empty for none.
  std::string token;
  // Deadline of each RPC attempt; zero means none. A read stream that hits
  // it resumes where it stopped.
  absl::Duration timeout = absl::Seconds(60);
};

// INVALID_ARGUMENT for combinations that cannot work.
absl::Status ValidateConnectionOptions(const ConnectionOptions& options);

// The SDK options the flags stand for.
sdk::ClientOptions ToClientOptions(const ConnectionOptions& options);

// Validates, reads the PEM files and creates the client; connecting happens
// on the first call, so an unreachable server surfaces there as UNAVAILABLE.
absl::StatusOr<std::unique_ptr<sdk::Client>> CreateClient(
    const ConnectionOptions& options);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_CLI_CONNECTION_H_
