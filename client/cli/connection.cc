// Maps the CLI's connection flags onto sdk::ClientOptions; the SDK makes the
// channel.

#include "client/cli/connection.h"

#include "lib/base/status_macros.h"

namespace verity::client {

absl::Status ValidateConnectionOptions(const ConnectionOptions& options) {
  if (options.server.empty()) {
    return absl::InvalidArgumentError("--server is empty");
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key must be given together");
  }
  if (!options.tls_cert_file.empty() && options.tls_ca_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert needs --tls-ca");
  }
  if (options.timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--timeout is negative");
  }
  return absl::OkStatus();
}

sdk::ClientOptions ToClientOptions(const ConnectionOptions& options) {
  sdk::ClientOptions client;
  client.target = options.server;
  client.rpc_timeout = options.timeout;
  client.bearer_token = options.token;
  if (!options.tls_ca_file.empty()) {
    sdk::TlsOptions& tls = client.tls.emplace();
    tls.root_certs_file = options.tls_ca_file;
    tls.cert_chain_file = options.tls_cert_file;
    tls.private_key_file = options.tls_key_file;
  }
  return client;
}

absl::StatusOr<std::unique_ptr<sdk::Client>> CreateClient(
    const ConnectionOptions& options) {
  RETURN_IF_ERROR(ValidateConnectionOptions(options));
  return sdk::Client::Create(ToClientOptions(options));
}

}  // namespace verity::client
