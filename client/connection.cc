// Creates insecure or (m)TLS channels from PEM files.

#include "client/connection.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"

namespace verity::client {
namespace {

absl::StatusOr<std::string> ReadPemFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::ErrnoToStatus(errno, absl::StrCat("can't read '", path, "'"));
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) {
    return absl::ErrnoToStatus(errno, absl::StrCat("can't read '", path, "'"));
  }
  return contents.str();
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> Credentials(
    const ConnectionOptions& options) {
  if (options.tls_ca_file.empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPemFile(options.tls_ca_file));
  if (!options.tls_cert_file.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadPemFile(options.tls_cert_file));
    ASSIGN_OR_RETURN(ssl.pem_private_key, ReadPemFile(options.tls_key_file));
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

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

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateChannel(
    const ConnectionOptions& options) {
  RETURN_IF_ERROR(ValidateConnectionOptions(options));
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                   Credentials(options));
  return grpc::CreateChannel(options.server, credentials);
}

absl::StatusOr<std::unique_ptr<verity::v1::Verity::Stub>> CreateStub(
    const ConnectionOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                   CreateChannel(options));
  return verity::v1::Verity::NewStub(channel);
}

void ApplyDeadline(const ConnectionOptions& options,
                   grpc::ClientContext* context) {
  if (options.timeout == absl::ZeroDuration()) return;
  context->set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
}

}  // namespace verity::client
