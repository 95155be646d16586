// Decides who may call what: bearer tokens and client certificate identities
// mapped to roles, from files that are read again on Reload() (SIGHUP).
// Without either file, every caller may do everything.

#ifndef VERITYD_SERVER_AUTH_AUTHORIZER_H_
#define VERITYD_SERVER_AUTH_AUTHORIZER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/auth/role.h"

namespace verity::server {

struct AuthOptions {
  // `ROLE TOKEN` lines (role_file.h); empty for none.
  std::string tokens_file;
  // `ROLE IDENTITY` lines: an identity is a client certificate's subject
  // alternative name (as gRPC reports it: a DNS name, URI, email or IP
  // address) or its common name; empty for none.
  std::string identities_file;
};

// What a call presents. Plain value.
struct CallerCredentials {
  // The values of its `authorization` headers.
  std::vector<std::string> authorization;
  // The SANs and CN of its verified client certificate, if any.
  std::vector<std::string> identities;
  // Over TLS, or from a loopback or unix-socket peer: where a bearer token
  // may be sent.
  bool secure_transport = false;
  bool loopback_peer = false;
};

// Thread-safe.
class Authorizer {
 public:
  // Reads the files; INVALID_ARGUMENT (naming the file and line) or the read
  // error if one is malformed or unreadable.
  static absl::StatusOr<std::unique_ptr<Authorizer>> Create(
      AuthOptions options);

  // Whether any file is configured; if not, Check() lets everything pass.
  bool enabled() const { return enabled_; }

  // Reads the files again and, if they are well-formed, replaces the grants
  // at once: a removed token stops working for the next call. Otherwise the
  // old grants stay and the error is returned.
  absl::Status Reload() ABSL_LOCKS_EXCLUDED(mu_);

  // OK if the caller holds `needed`. UNAUTHENTICATED without credentials, with
  // an unknown or malformed token, or with a token sent over plaintext off
  // loopback; PERMISSION_DENIED if the role it holds is too small. `what`
  // names the operation in the message, which never contains a token.
  absl::Status Check(const CallerCredentials& caller, Role needed,
                     absl::string_view what) const ABSL_LOCKS_EXCLUDED(mu_);

  // "N tokens, M identities", for the log; never the values.
  std::string Summary() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Tokens are kept by their SHA-256, so a lookup compares no secret bytes.
  struct Grants {
    absl::flat_hash_map<std::string, Role> token_hashes;
    absl::flat_hash_map<std::string, Role> identities;
  };

  explicit Authorizer(AuthOptions options)
      : options_(std::move(options)),
        enabled_(!options_.tokens_file.empty() ||
                 !options_.identities_file.empty()) {}

  absl::StatusOr<std::shared_ptr<const Grants>> Load() const;
  std::shared_ptr<const Grants> grants() const ABSL_LOCKS_EXCLUDED(mu_);
  // The role of the caller's token; nullopt if it sent none.
  absl::StatusOr<std::optional<Role>> TokenRole(
      const Grants& grants, const CallerCredentials& caller) const;

  const AuthOptions options_;
  const bool enabled_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Grants> grants_ ABSL_GUARDED_BY(mu_);
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_AUTH_AUTHORIZER_H_
