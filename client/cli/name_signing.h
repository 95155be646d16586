// Signing a name's statement from the command line, shared by `verity sign`
// and `verity put --sign-key`: the key file, the version (NextNameVersion
// over what this key signed) and the expiry.

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
#include "lib/tree/descriptor.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"
#include "verity/client.h"

namespace verity::cli {

inline constexpr absl::Duration kDefaultStatementLifetime =
    absl::Hours(24 * 30);

// For the commands' usage texts.
inline constexpr char kSigningUsage[] =
    "  --version=N: the statement's version, which must grow with every\n"
    "    statement for the name (default: the time in milliseconds since\n"
    "    1970, or above it if this key signed a higher one: see\n"
    "    docs/protocol.md); refused if not above what this key signed\n"
    "  --state-dir=DIR: where the versions this key signed are recorded\n"
    "    (default $XDG_STATE_HOME/verity, else ~/.local/state/verity)\n"
    "  --expires-in=DURATION: how long clients accept it, as 720h, 90m or\n"
    "    30d (default 30d); sign again before it runs out\n";

// Plain value.
struct SigningOptions {
  std::string key_file;  // a PKCS#8 PEM Ed25519 private key
  std::optional<uint64_t> version;
  std::string state_dir;  // empty: the SDK's default state directory
  absl::Duration expires_in = kDefaultStatementLifetime;
};

// The Ed25519 private key in the PEM file `path` (a signing key, a
// witness's); INVALID_ARGUMENT naming the file if it is not one.
absl::StatusOr<Ed25519PrivateKey> ReadPrivateKey(const std::string& path);

// --version and --expires-in, and the key file as --`key_flag`.
std::vector<CommandFlag> SigningFlags(SigningOptions* options,
                                      const char* key_flag);

// The version of the statement the server holds for `name` if it verifies
// as `signer`'s for that name; 0 if the name, its statement or a valid
// signature by `signer` is absent. Anything else is what a store writer can
// plant, and its version is not used.
absl::StatusOr<uint64_t> VerifiedStoredVersion(sdk::Client& client,
                                               absl::string_view name,
                                               const Ed25519PublicKey& signer);

// The encoded statement "`name` means `digest`, a file or a tree (`kind`)",
// issued now, at the version
// NextNameVersion gives over this key's record of what it signed (the state
// directory's signed-<key id>.seen) and, if `client` is not null, the stored
// statement's version if this key signed it. Recorded there before it is
// returned. FAILED_PRECONDITION for a --version not above those.
absl::StatusOr<std::string> SignName(const SigningOptions& options,
                                     absl::string_view name,
                                     const ParsedDigest& digest, NameKind kind,
                                     sdk::Client* client);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_NAME_SIGNING_H_
