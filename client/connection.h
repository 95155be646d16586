// How the `verity` commands reach verityd: the options shared by every
// command and the gRPC channel and stub they make.

#ifndef VERITYD_CLIENT_CONNECTION_H_
#define VERITYD_CLIENT_CONNECTION_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/verity/v1/verity.grpc.pb.h"

namespace verity::client {

// Plain value.
struct ConnectionOptions {
  // HOST:PORT, or any gRPC target such as unix:/path.
  std::string server = "127.0.0.1:50051";
  // PEM file of the CA certificates to trust; setting it enables TLS. Empty
  // means plaintext.
  std::string tls_ca_file;
  // PEM client certificate chain and private key for mutual TLS: both or
  // neither, and only with tls_ca_file.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Deadline for each RPC from start to finish, streams included; zero means
  // none. A large `get` needs room.
  absl::Duration timeout = absl::Seconds(60);
};

// INVALID_ARGUMENT for combinations that cannot work.
absl::Status ValidateConnectionOptions(const ConnectionOptions& options);

// Reads the PEM files and creates the channel; connecting happens on the
// first RPC, so an unreachable server surfaces there as UNAVAILABLE.
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateChannel(
    const ConnectionOptions& options);

// CreateChannel wrapped in a stub.
absl::StatusOr<std::unique_ptr<verity::v1::Verity::Stub>> CreateStub(
    const ConnectionOptions& options);

// Sets the deadline `options` asks for on a context before its RPC starts.
void ApplyDeadline(const ConnectionOptions& options,
                   grpc::ClientContext* context);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_CONNECTION_H_
