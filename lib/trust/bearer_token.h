// The syntax of a bearer token, which the server's token file and the SDK
// both check: RFC 6750's token68, long enough not to be guessed.

#ifndef VERITYD_LIB_TRUST_BEARER_TOKEN_H_
#define VERITYD_LIB_TRUST_BEARER_TOKEN_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace verity {

inline constexpr size_t kMinBearerTokenLength = 16;

// OK for at least kMinBearerTokenLength characters of letters, digits and
// "-._~+/", then any "="; INVALID_ARGUMENT, without the token, otherwise.
absl::Status ValidateBearerToken(absl::string_view token);

}  // namespace verity

#endif  // VERITYD_LIB_TRUST_BEARER_TOKEN_H_
