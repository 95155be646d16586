// Whether a call may start at all, asked before anything else of it runs: the
// caller must hold the role the call needs (Authorizer), and its connection
// must be within its request rate (PeerRateLimiter).

#ifndef VERITYD_SERVER_RPC_CALL_ADMISSION_H_
#define VERITYD_SERVER_RPC_CALL_ADMISSION_H_

#include <grpcpp/grpcpp.h>

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/auth/authorizer.h"
#include "server/auth/role.h"
#include "server/rpc/peer_rate_limiter.h"

namespace verity::server {

// What admits calls, shared with whoever made it.
struct CallGate {
  // Who may call what; null: everyone everything.
  std::shared_ptr<const Authorizer> authorizer;
  // How often each connection may start a call; null: unbounded.
  std::shared_ptr<PeerRateLimiter> rate_limiter;
};

// What `call` presents: its authorization headers, the identities of its
// verified client certificate, and whether a token may travel over it.
CallerCredentials CredentialsOf(const grpc::CallbackServerContext& call);

// OK, or UNAUTHENTICATED / PERMISSION_DENIED (see Authorizer::Check), or
// RESOURCE_EXHAUSTED if the connection is over --max_call_rate. `what`
// names the call in messages.
absl::Status AdmitCall(const CallGate& gate,
                       const grpc::CallbackServerContext& call, Role needed,
                       absl::string_view what);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_CALL_ADMISSION_H_
