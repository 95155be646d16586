// Implements CreateClientChannel. Round robin is chosen by the default
// service config, so a dns:/// target spreads calls over every replica it
// names, and a resumed stream may land on another one.

#include "client/sdk/channel.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "client/sdk/bearer_token_interceptor.h"
#include "lib/base/file_util.h"
#include "lib/base/loopback_address.h"
#include "lib/base/status_macros.h"
#include "lib/trust/bearer_token.h"

namespace verity::client {
namespace {

constexpr char kServiceConfig[] =
    R"({"loadBalancingConfig": [{"round_robin": {}}]})";
// PEM bundles are small; this only stops a wrong path from reading a disk.
constexpr size_t kMaxPemBytes = size_t{1} << 20;
// gRPC's own floor for a stream window is 64 KiB (HTTP/2's default); a
// window past 1 GiB would only mean memory.
constexpr int kMinReceiveWindowBytes = 64 << 10;
constexpr int kMaxReceiveWindowBytes = 1 << 30;
// The DATA frames the server may send, as HTTP/2 SETTINGS_MAX_FRAME_SIZE
// (default 16 KiB): a Read message arrives in a few large slices, not 128
// small ones, so both sides frame and parse less and blocks split between
// slices are rare. 1 MiB rather than larger keeps a frame's wait short for
// the calls that share the connection (docs/tuning.md).
constexpr int kMaxFrameBytes = 1 << 20;

// A PEM value given inline or as a file, or empty if neither is set.
absl::StatusOr<std::string> PemValue(const std::string& inline_pem,
                                     const std::string& file,
                                     absl::string_view what) {
  if (!inline_pem.empty() && !file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("give the ", what, " inline or as a file, not both"));
  }
  if (file.empty()) return inline_pem;
  return ReadSmallFile(file, kMaxPemBytes);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> Credentials(
    const sdk::ClientOptions& options) {
  if (!options.tls.has_value()) return grpc::InsecureChannelCredentials();
  const sdk::TlsOptions& tls = *options.tls;
  grpc::SslCredentialsOptions ssl;
  ASSIGN_OR_RETURN(
      ssl.pem_root_certs,
      PemValue(tls.root_certs_pem, tls.root_certs_file, "root certificates"));
  ASSIGN_OR_RETURN(
      ssl.pem_cert_chain,
      PemValue(tls.cert_chain_pem, tls.cert_chain_file, "certificate chain"));
  ASSIGN_OR_RETURN(
      ssl.pem_private_key,
      PemValue(tls.private_key_pem, tls.private_key_file, "private key"));
  if (ssl.pem_cert_chain.empty() != ssl.pem_private_key.empty()) {
    return absl::InvalidArgumentError(
        "a client certificate and its private key go together");
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

absl::Status ValidateChannelOptions(const sdk::ClientOptions& options) {
  if (options.target.empty()) {
    return absl::InvalidArgumentError("the target is empty");
  }
  if (options.max_message_bytes <= 0) {
    return absl::InvalidArgumentError("max_message_bytes must be positive");
  }
  if (options.receive_window_bytes < kMinReceiveWindowBytes ||
      options.receive_window_bytes > kMaxReceiveWindowBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("receive_window_bytes must be from ",
                     kMinReceiveWindowBytes, " to ", kMaxReceiveWindowBytes));
  }
  if (options.rpc_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("rpc_timeout is negative");
  }
  if (!options.bearer_token.empty()) {
    RETURN_IF_ERROR(ValidateBearerToken(options.bearer_token));
    if (!options.tls.has_value() && !IsLoopbackAddress(options.target)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing to send a bearer token in plaintext to ", options.target,
          ": use TLS, or a loopback or unix-socket target"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateClientChannel(
    const sdk::ClientOptions& options) {
  RETURN_IF_ERROR(ValidateChannelOptions(options));
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                   Credentials(options));
  grpc::ChannelArguments args;
  args.SetServiceConfigJSON(kServiceConfig);
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, kMaxFrameBytes);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES,
              options.receive_window_bytes);
  if (options.bearer_token.empty()) {
    return grpc::CreateCustomChannel(options.target, credentials, args);
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      options.target, credentials, args,
      BearerTokenInterceptors(options.bearer_token));
}

}  // namespace verity::client
