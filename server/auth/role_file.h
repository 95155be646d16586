// Parses the files that grant roles: one `ROLE VALUE` pair per line, where
// VALUE is a bearer token (--auth_tokens) or a client certificate identity
// (--auth_identities). Blank lines and lines starting with `#` are skipped.

#ifndef VERITYD_SERVER_AUTH_ROLE_FILE_H_
#define VERITYD_SERVER_AUTH_ROLE_FILE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/auth/role.h"

namespace verity::server {

struct RoleGrant {
  Role role;
  std::string value;
  int line;  // from 1
};

// The grants of `text`, in order. INVALID_ARGUMENT naming the line number
// (never its value, which may be a secret) for a line that is not a known
// role, one or more spaces or tabs, and a value of visible ASCII; or for a
// value given twice.
absl::StatusOr<std::vector<RoleGrant>> ParseRoleFile(absl::string_view text);

}  // namespace verity::server

#endif  // VERITYD_SERVER_AUTH_ROLE_FILE_H_
