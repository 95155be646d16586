// Implements Authorizer. The grants are an immutable snapshot behind a
// shared_ptr: a check copies the pointer under the lock and reads it outside,
// and a reload swaps in a new one.

#include "server/auth/authorizer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/trust/bearer_token.h"
#include "server/auth/role_file.h"

namespace verity::server {
namespace {

// Role files are small; this stops a wrong path from reading a disk.
constexpr size_t kMaxRoleFileBytes = size_t{1} << 20;

std::string TokenHash(absl::string_view token) {
  return ComputeHash(HashAlgorithm::kSha256, AsBytes(token));
}

// The grants of one file, each checked by `validate`.
template <typename Validate>
absl::Status LoadFile(const std::string& path, Validate validate,
                      absl::flat_hash_map<std::string, Role>* out) {
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> text = ReadSmallFile(path, kMaxRoleFileBytes);
  absl::StatusOr<std::vector<RoleGrant>> grants =
      text.ok() ? ParseRoleFile(*text) : text.status();
  if (!grants.ok()) {
    return absl::Status(grants.status().code(),
                        absl::StrCat(path, ": ", grants.status().message()));
  }
  for (RoleGrant& grant : *grants) {
    absl::StatusOr<std::string> key = validate(grant.value);
    if (!key.ok()) {
      return absl::Status(key.status().code(),
                          absl::StrCat(path, ": line ", grant.line, ": ",
                                       key.status().message()));
    }
    (*out)[*std::move(key)] = grant.role;
  }
  return absl::OkStatus();
}

// The token of an `authorization: Bearer TOKEN` value (the scheme is
// case-insensitive, as in RFC 7235).
absl::StatusOr<absl::string_view> BearerToken(absl::string_view value) {
  constexpr absl::string_view kScheme = "bearer ";
  if (value.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(value.substr(0, kScheme.size()), kScheme)) {
    return absl::UnauthenticatedError(
        "malformed authorization header: want 'Bearer TOKEN'");
  }
  return absl::StripLeadingAsciiWhitespace(value.substr(kScheme.size()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Authorizer>> Authorizer::Create(
    AuthOptions options) {
  std::unique_ptr<Authorizer> authorizer(new Authorizer(std::move(options)));
  RETURN_IF_ERROR(authorizer->Reload());
  return authorizer;
}

absl::StatusOr<std::shared_ptr<const Authorizer::Grants>> Authorizer::Load()
    const {
  auto grants = std::make_shared<Grants>();
  RETURN_IF_ERROR(LoadFile(
      options_.tokens_file,
      [](const std::string& token) -> absl::StatusOr<std::string> {
        RETURN_IF_ERROR(ValidateBearerToken(token));
        return TokenHash(token);
      },
      &grants->token_hashes));
  RETURN_IF_ERROR(LoadFile(
      options_.identities_file,
      [](const std::string& identity) -> absl::StatusOr<std::string> {
        return identity;
      },
      &grants->identities));
  return grants;
}

absl::Status Authorizer::Reload() {
  ASSIGN_OR_RETURN(std::shared_ptr<const Grants> grants, Load());
  absl::MutexLock lock(&mu_);
  grants_ = std::move(grants);
  return absl::OkStatus();
}

std::shared_ptr<const Authorizer::Grants> Authorizer::grants() const {
  absl::MutexLock lock(&mu_);
  return grants_;
}

std::string Authorizer::Summary() const {
  const std::shared_ptr<const Grants> grants = this->grants();
  return absl::StrCat(grants->token_hashes.size(), " tokens, ",
                      grants->identities.size(), " identities");
}

absl::StatusOr<std::optional<Role>> Authorizer::TokenRole(
    const Grants& grants, const CallerCredentials& caller) const {
  if (caller.authorization.empty()) return std::nullopt;
  if (caller.authorization.size() > 1) {
    return absl::UnauthenticatedError("more than one authorization header");
  }
  ASSIGN_OR_RETURN(const absl::string_view token,
                   BearerToken(caller.authorization[0]));
  if (!caller.secure_transport && !caller.loopback_peer) {
    return absl::UnauthenticatedError(
        "a bearer token is accepted only over TLS or from loopback");
  }
  const auto it = grants.token_hashes.find(TokenHash(token));
  if (it == grants.token_hashes.end()) {
    return absl::UnauthenticatedError("unknown bearer token");
  }
  return it->second;
}

absl::Status Authorizer::Check(const CallerCredentials& caller, Role needed,
                               absl::string_view what) const {
  if (!enabled_) return absl::OkStatus();
  const std::shared_ptr<const Grants> grants = this->grants();
  ASSIGN_OR_RETURN(const std::optional<Role> token_role,
                   TokenRole(*grants, caller));
  Role held = token_role.value_or(Role::kNone);
  for (const std::string& identity : caller.identities) {
    const auto it = grants->identities.find(identity);
    if (it != grants->identities.end()) held = std::max(held, it->second);
  }
  if (!token_role.has_value() && caller.identities.empty()) {
    return absl::UnauthenticatedError(
        "credentials required: send 'authorization: Bearer TOKEN' or a "
        "client certificate");
  }
  if (!Includes(held, needed)) {
    return absl::PermissionDeniedError(
        absl::StrCat(what, " needs the ", RoleName(needed),
                     " role; the caller has ", RoleName(held)));
  }
  return absl::OkStatus();
}

}  // namespace verity::server
