// The flags of `verity get` and `verity stat` that make a name mean only
// what trusted keys signed (--trusted-keys, --trusted-keys-threshold,
// --state-dir) and a blob only what pinned certificates signed
// (--fsverity-cert), turned into the SDK's options.

#ifndef VERITYD_CLIENT_CLI_TRUST_OPTIONS_H_
#define VERITYD_CLIENT_CLI_TRUST_OPTIONS_H_

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/cli/command_line.h"
#include "client/cli/connection.h"
#include "client/names/blob_ref.h"
#include "verity/client.h"

namespace verity::cli {

// For the commands' usage texts.
inline constexpr char kTrustUsage[] =
    "Signed names: [--trusted-keys=FILE] (Ed25519 public keys, PEM; default\n"
    "            $VERITY_TRUSTED_KEYS; set but empty is an error) requires a\n"
    "            name's statement to be signed by them, to name it, to be\n"
    "            current (5 minutes of clock skew allowed) and not older\n"
    "            than the newest seen; a refusal exits 3 (digests need none)\n"
    "            [--trusted-keys-threshold=K] (how many of them must sign;\n"
    "            default 1)\n"
    "            [--state-dir=DIR] (where the newest versions seen are kept;\n"
    "            default $XDG_STATE_HOME/verity, else\n"
    "            ~/.local/state/verity)\n"
    "            [--max-statement-age=DURATION] (a name with no record there\n"
    "            yet needs a statement issued within DURATION, as 24h: what\n"
    "            a fresh state cannot tell from a replayed old one; sync and\n"
    "            mount default to 24h, the others to none: the publisher\n"
    "            re-signs at least that often)\n"
    "Transparency log: [--log-key=FILE] (the log's verifier key, as\n"
    "            `verity keygen --log-origin` writes FILE.vkey; default\n"
    "            $VERITY_LOG_KEY; set but empty is an error) requires the\n"
    "            server to prove that a name's statement is in its log,\n"
    "            under a checkpoint signed by that key and consistent with\n"
    "            the newest one seen (kept in --state-dir; a contradiction\n"
    "            is saved there as evidence); a refusal exits 3\n"
    "            [--witness-keys=FILE] (witnesses' verifier keys, one per\n"
    "            line, as `verity keygen --witness-name` writes FILE.vkey;\n"
    "            default $VERITY_WITNESS_KEYS) requires that checkpoint to\n"
    "            be cosigned by [--witness-threshold=K] of them (default 1)\n"
    "fs-verity signatures: [--fsverity-cert=PEM] (certificates, pinned;\n"
    "            default $VERITY_FSVERITY_CERT; set but empty is an error)\n"
    "            requires the blob's `fsverity sign` signature to verify\n"
    "            with one of them; a refusal exits 3, nothing written. It\n"
    "            binds the content, not a name: by name, only\n"
    "            --trusted-keys proves which blob the name means\n";

// Plain value. A file option that is set must name a file: set but empty
// (as `--trusted-keys=$UNSET` writes it) is an error, never "no checks".
struct TrustOptions {
  std::optional<std::string> keys_file;  // unset: names are the server's word
  int threshold = 1;
  std::string state_dir;  // empty: the SDK's default
  // --max-statement-age; unset: the command's default.
  std::optional<absl::Duration> max_statement_age;
  std::optional<std::string> fsverity_cert_file;  // unset: no signature needed
  std::optional<std::string> log_key_file;        // unset: no log proof needed
  std::optional<std::string> witness_keys_file;   // unset: no cosignature
  int witness_threshold = 1;
};

// The defaults: keys_file from $VERITY_TRUSTED_KEYS, fsverity_cert_file
// from $VERITY_FSVERITY_CERT, log_key_file from $VERITY_LOG_KEY and
// witness_keys_file from $VERITY_WITNESS_KEYS when they
// are set, even to nothing.
TrustOptions DefaultTrustOptions();

// The flags, writing into `options`.
std::vector<CommandFlag> TrustFlags(TrustOptions* options);

// What --max-statement-age is by default for a command that keeps a name
// current for a long time (verity sync, verity mount): a day.
inline constexpr absl::Duration kLongLivedMaxStatementAge = absl::Hours(24);

// A client for `connection` that checks names and signatures with `trust`:
// reads the keys and certificate files (INVALID_ARGUMENT naming an option
// set to nothing, or a file that cannot be read or is empty).
absl::StatusOr<std::unique_ptr<sdk::Client>> CreateTrustingClient(
    const client::ConnectionOptions& connection, const TrustOptions& trust);

// For `command` reading `blob`: one line on `err` when it is a name that
// nothing authenticates although a certificate is pinned, since the
// signature then proves the content but not what the name means.
void WarnIfNameUnauthenticated(const TrustOptions& trust,
                               const client::BlobRef& blob,
                               absl::string_view command, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_TRUST_OPTIONS_H_
