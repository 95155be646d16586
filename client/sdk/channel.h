// The gRPC channel behind an SDK Client: plaintext or (mutual) TLS, round
// robin over every address the target resolves to, and a bound on the size
// of messages from the server.

#ifndef VERITYD_CLIENT_SDK_CHANNEL_H_
#define VERITYD_CLIENT_SDK_CHANNEL_H_

#include <grpcpp/grpcpp.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "verity/options.h"

namespace verity::client {

// INVALID_ARGUMENT for options no channel can be made from.
absl::Status ValidateChannelOptions(const sdk::ClientOptions& options);

// Reads any PEM files named in options.tls and creates the channel;
// connecting happens on the first RPC, so an unreachable server surfaces
// there, as UNAVAILABLE.
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateClientChannel(
    const sdk::ClientOptions& options);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_CHANNEL_H_
