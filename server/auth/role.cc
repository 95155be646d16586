// Implements the role names.

#include "server/auth/role.h"

#include "absl/strings/str_cat.h"

namespace verity::server {

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  if (name == "read") return Role::kRead;
  if (name == "write") return Role::kWrite;
  if (name == "admin") return Role::kAdmin;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", name, "': must be read, write or admin"));
}

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kWrite:
      return "write";
    case Role::kAdmin:
      return "admin";
    case Role::kNone:
      break;
  }
  return "no role";
}

}  // namespace verity::server
