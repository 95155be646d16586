// Signing a name's statement from the command line, shared by `verity sign`
// and `verity put --sign-key`: the key file, the version (by default the
// name's current one + 1) and the expiry.

#ifndef VERITYD_CLIENT_CLI_NAME_SIGNING_H_
#define VERITYD_CLIENT_CLI_NAME_SIGNING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/cli/command_line.h"
#include "lib/descriptor.h"
#include "verity/client.h"

namespace verity::cli {

inline constexpr absl::Duration kDefaultStatementLifetime =
    absl::Hours(24 * 30);

// For the commands' usage texts.
inline constexpr char kSigningUsage[] =
    "  --version=N: the statement's version, which must grow with every\n"
    "    statement for the name (default: the version of the statement the\n"
    "    server holds for it + 1, or 1 if it holds none)\n"
    "  --expires-in=DURATION: how long clients accept it, as 720h, 90m or\n"
    "    30d (default 30d); sign again before it runs out\n";

// Plain value.
struct SigningOptions {
  std::string key_file;  // a PKCS#8 PEM Ed25519 private key
  std::optional<uint64_t> version;
  absl::Duration expires_in = kDefaultStatementLifetime;
};

// --version and --expires-in, and the key file as --`key_flag`.
std::vector<CommandFlag> SigningFlags(SigningOptions* options,
                                      const char* key_flag);

// The version after the one of the statement the server holds for `name`
// (Stat, unverified: the publisher's own server), or 1 if the name or its
// statement is absent.
absl::StatusOr<uint64_t> NextVersion(sdk::Client& client,
                                     absl::string_view name);

// The encoded statement "`name` means `digest`", issued now. `client` is
// asked for the version only when options.version is unset.
absl::StatusOr<std::string> SignName(const SigningOptions& options,
                                     absl::string_view name,
                                     const ParsedDigest& digest,
                                     sdk::Client* client);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_NAME_SIGNING_H_
