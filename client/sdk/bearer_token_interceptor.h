// Adds `authorization: Bearer TOKEN` to every call of a channel, so that no
// call site can forget it (a gRPC call credential would refuse plaintext,
// which a loopback sidecar uses).

#ifndef VERITYD_CLIENT_SDK_BEARER_TOKEN_INTERCEPTOR_H_
#define VERITYD_CLIENT_SDK_BEARER_TOKEN_INTERCEPTOR_H_

#include <grpcpp/support/client_interceptor.h>

#include <memory>
#include <string>
#include <vector>

namespace verity::client {

// The interceptor factories to create a channel with.
std::vector<
    std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
BearerTokenInterceptors(const std::string& token);

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_BEARER_TOKEN_INTERCEPTOR_H_
