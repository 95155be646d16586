// Implements ValidateBearerToken.

#include "lib/trust/bearer_token.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace verity {
namespace {

bool IsToken68Char(char c) {
  return absl::ascii_isalnum(c) ||
         absl::string_view("-._~+/").find(c) != absl::string_view::npos;
}

}  // namespace

absl::Status ValidateBearerToken(absl::string_view token) {
  // The characters before any trailing '='.
  const size_t chars = token.find_last_not_of('=') + 1;
  if (token.size() < kMinBearerTokenLength || chars == 0 ||
      !std::all_of(token.begin(), token.begin() + chars, IsToken68Char)) {
    return absl::InvalidArgumentError(
        absl::StrCat("a bearer token is at least ", kMinBearerTokenLength,
                     " characters of letters, digits and -._~+/ (then any =)"));
  }
  return absl::OkStatus();
}

}  // namespace verity
