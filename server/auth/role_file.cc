// Implements ParseRoleFile on Abseil's string utilities.

#include "server/auth/role_file.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace verity::server {
namespace {

bool IsVisibleAscii(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c > ' ' && c < 0x7f;
  });
}

absl::Status LineError(int line, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", problem));
}

}  // namespace

absl::StatusOr<std::vector<RoleGrant>> ParseRoleFile(absl::string_view text) {
  std::vector<RoleGrant> grants;
  absl::flat_hash_set<std::string> seen;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    const size_t space = line.find_first_of(" \t");
    if (space == absl::string_view::npos) {
      return LineError(number, "want ROLE VALUE");
    }
    absl::StatusOr<Role> role = ParseRole(line.substr(0, space));
    if (!role.ok()) return LineError(number, role.status().message());
    const absl::string_view value =
        absl::StripLeadingAsciiWhitespace(line.substr(space));
    if (!IsVisibleAscii(value)) {
      return LineError(number, "the value must be visible ASCII, no spaces");
    }
    if (!seen.insert(std::string(value)).second) {
      return LineError(number, "this value is given on an earlier line too");
    }
    grants.push_back({*role, std::string(value), number});
  }
  return grants;
}

}  // namespace verity::server
