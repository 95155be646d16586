// The flags of `verity get` and `verity stat` that make a name mean only
// what trusted keys signed (--trusted-keys, --trusted-keys-threshold,
// --state-dir) and a blob only what pinned certificates signed
// (--fsverity-cert), turned into the SDK's options.

#ifndef VERITYD_CLIENT_CLI_TRUST_OPTIONS_H_
#define VERITYD_CLIENT_CLI_TRUST_OPTIONS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/cli/command_line.h"
#include "client/cli/connection.h"
#include "verity/client.h"

namespace verity::cli {

// For the commands' usage texts.
inline constexpr char kTrustUsage[] =
    "Signed names: [--trusted-keys=FILE] (Ed25519 public keys, PEM; default\n"
    "            $VERITY_TRUSTED_KEYS; empty for none) requires a name's\n"
    "            statement to be signed by them, to name it, to be current\n"
    "            (5 minutes of clock skew allowed) and not older than the\n"
    "            newest seen; a refusal exits 3 (digests need none)\n"
    "            [--trusted-keys-threshold=K] (how many of them must sign;\n"
    "            default 1)\n"
    "            [--state-dir=DIR] (where the newest versions seen are kept;\n"
    "            default $XDG_STATE_HOME/verity, else\n"
    "            ~/.local/state/verity)\n"
    "fs-verity signatures: [--fsverity-cert=PEM] (certificates, pinned;\n"
    "            default $VERITY_FSVERITY_CERT) requires the blob's `fsverity\n"
    "            sign` signature to verify with one of them; a refusal\n"
    "            exits 3, nothing written\n";

// Plain value.
struct TrustOptions {
  std::string keys_file;  // empty: names are the server's word
  int threshold = 1;
  std::string state_dir;           // empty: the SDK's default
  std::string fsverity_cert_file;  // empty: blobs need no signature
};

// The defaults: keys_file from $VERITY_TRUSTED_KEYS and fsverity_cert_file
// from $VERITY_FSVERITY_CERT when they are set.
TrustOptions DefaultTrustOptions();

// The four flags, writing into `options`.
std::vector<CommandFlag> TrustFlags(TrustOptions* options);

// A client for `connection` that checks names and signatures with `trust`:
// reads the keys and certificate files (INVALID_ARGUMENT naming one that
// cannot be read or is empty).
absl::StatusOr<std::unique_ptr<sdk::Client>> CreateTrustingClient(
    const client::ConnectionOptions& connection, const TrustOptions& trust);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_TRUST_OPTIONS_H_
