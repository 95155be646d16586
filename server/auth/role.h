// The roles a caller may hold, each including the ones before it: read
// (Read, Stat, List), write (also Put and name changes), admin (also
// deleting blobs).

#ifndef VERITYD_SERVER_AUTH_ROLE_H_
#define VERITYD_SERVER_AUTH_ROLE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::server {

enum class Role { kNone = 0, kRead = 1, kWrite = 2, kAdmin = 3 };

// "read", "write" or "admin"; INVALID_ARGUMENT for anything else.
absl::StatusOr<Role> ParseRole(absl::string_view name);

// "read", "write", "admin", or "no role".
absl::string_view RoleName(Role role);

// True if `held` includes `needed`.
inline bool Includes(Role held, Role needed) {
  return static_cast<int>(held) >= static_cast<int>(needed);
}

}  // namespace verity::server

#endif  // VERITYD_SERVER_AUTH_ROLE_H_
