// Implements call admission on gRPC's client metadata and AuthContext.

#include "server/rpc/call_admission.h"

#include <string>

#include "lib/base/loopback_address.h"
#include "lib/base/status_macros.h"

namespace verity::server {
namespace {

// gRPC's AuthContext property names (grpc_security_constants.h).
constexpr char kTransportSecurityType[] = "transport_security_type";
constexpr char kSsl[] = "ssl";
constexpr const char* kIdentityProperties[] = {"x509_subject_alternative_name",
                                               "x509_common_name"};

std::string AsString(const grpc::string_ref& ref) {
  return std::string(ref.data(), ref.size());
}

}  // namespace

CallerCredentials CredentialsOf(const grpc::CallbackServerContext& call) {
  CallerCredentials caller;
  const auto [begin, end] = call.client_metadata().equal_range("authorization");
  for (auto it = begin; it != end; ++it) {
    caller.authorization.push_back(AsString(it->second));
  }
  caller.loopback_peer = IsLoopbackAddress(call.peer());
  const std::shared_ptr<const grpc::AuthContext> auth = call.auth_context();
  if (auth == nullptr) return caller;
  for (const grpc::string_ref& type :
       auth->FindPropertyValues(kTransportSecurityType)) {
    if (type == kSsl) caller.secure_transport = true;
  }
  if (!caller.secure_transport || !auth->IsPeerAuthenticated()) return caller;
  for (const char* property : kIdentityProperties) {
    for (const grpc::string_ref& value : auth->FindPropertyValues(property)) {
      caller.identities.push_back(AsString(value));
    }
  }
  return caller;
}

absl::Status AdmitCall(const CallGate& gate,
                       const grpc::CallbackServerContext& call, Role needed,
                       absl::string_view what) {
  if (gate.authorizer != nullptr && gate.authorizer->enabled()) {
    RETURN_IF_ERROR(gate.authorizer->Check(CredentialsOf(call), needed, what));
  }
  if (gate.rate_limiter != nullptr) {
    RETURN_IF_ERROR(gate.rate_limiter->Admit(call.peer()));
  }
  return absl::OkStatus();
}

}  // namespace verity::server
