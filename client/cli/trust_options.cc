// Implements the trust flags: the keys file is read here, once, and passed
// to the SDK as text.

#include "client/cli/trust_options.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "client/cli/flag_values.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/trust/name_statement.h"

namespace verity::cli {
namespace {

// Far more than kMaxStatementSigners PEM public keys, or a few certificates,
// take.
constexpr size_t kMaxTrustFileBytes = 1 << 20;

// --trusted-keys-threshold or --witness-threshold (`flag`).
absl::StatusOr<int> ParseThreshold(absl::string_view flag,
                                   absl::string_view text) {
  ASSIGN_OR_RETURN(const uint64_t value, ParseUint64Flag(flag, text));
  // The SDK checks it against the number of keys.
  if (value < 1 || value > kMaxStatementSigners) {
    return absl::InvalidArgumentError(absl::StrCat("invalid ", flag, " '", text,
                                                   "': must be from 1 to ",
                                                   kMaxStatementSigners));
  }
  return static_cast<int>(value);
}

}  // namespace

TrustOptions DefaultTrustOptions() {
  TrustOptions options;
  if (const char* keys = std::getenv("VERITY_TRUSTED_KEYS"); keys != nullptr) {
    options.keys_file = keys;
  }
  if (const char* certs = std::getenv("VERITY_FSVERITY_CERT");
      certs != nullptr) {
    options.fsverity_cert_file = certs;
  }
  if (const char* log_key = std::getenv("VERITY_LOG_KEY"); log_key != nullptr) {
    options.log_key_file = log_key;
  }
  if (const char* witnesses = std::getenv("VERITY_WITNESS_KEYS");
      witnesses != nullptr) {
    options.witness_keys_file = witnesses;
  }
  return options;
}

std::vector<CommandFlag> TrustFlags(TrustOptions* options) {
  return {
      {"trusted-keys", 0, true,
       [options](absl::string_view v) {
         options->keys_file = std::string(v);
         return absl::OkStatus();
       }},
      {"trusted-keys-threshold", 0, true,
       [options](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(options->threshold,
                          ParseThreshold("--trusted-keys-threshold", v));
         return absl::OkStatus();
       }},
      {"fsverity-cert", 0, true,
       [options](absl::string_view v) {
         options->fsverity_cert_file = std::string(v);
         return absl::OkStatus();
       }},
      {"log-key", 0, true,
       [options](absl::string_view v) {
         options->log_key_file = std::string(v);
         return absl::OkStatus();
       }},
      {"witness-keys", 0, true,
       [options](absl::string_view v) {
         options->witness_keys_file = std::string(v);
         return absl::OkStatus();
       }},
      {"witness-threshold", 0, true,
       [options](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(options->witness_threshold,
                          ParseThreshold("--witness-threshold", v));
         return absl::OkStatus();
       }},
      {"max-statement-age", 0, true,
       [options](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(const absl::Duration age,
                          ParseDurationFlag("--max-statement-age", v));
         if (age <= absl::ZeroDuration()) {
           return absl::InvalidArgumentError(
               "--max-statement-age must be positive");
         }
         options->max_statement_age = age;
         return absl::OkStatus();
       }},
      {"state-dir", 0, true,
       [options](absl::string_view v) -> absl::Status {
         if (v.empty())
           return absl::InvalidArgumentError("--state-dir is empty");
         options->state_dir = std::string(v);
         return absl::OkStatus();
       }},
  };
}

namespace {

// The text of `path` for `flag`; an empty file is refused, since empty text
// turns the check off: never fail open.
absl::StatusOr<std::string> ReadTrustFile(absl::string_view flag,
                                          absl::string_view variable,
                                          const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " (or $", variable,
        ") is set but empty: give a file, or unset it to check nothing"));
  }
  absl::StatusOr<std::string> text = ReadSmallFile(path, kMaxTrustFileBytes);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", text.status().message()));
  }
  if (text->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, " is empty"));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<sdk::Client>> CreateTrustingClient(
    const client::ConnectionOptions& connection, const TrustOptions& trust) {
  RETURN_IF_ERROR(client::ValidateConnectionOptions(connection));
  sdk::ClientOptions options = client::ToClientOptions(connection);
  if (trust.keys_file.has_value()) {
    ASSIGN_OR_RETURN(options.trusted_keys,
                     ReadTrustFile("--trusted-keys", "VERITY_TRUSTED_KEYS",
                                   *trust.keys_file));
  } else if (trust.threshold != 1) {
    return absl::InvalidArgumentError(
        "--trusted-keys-threshold needs --trusted-keys");
  }
  if (trust.fsverity_cert_file.has_value()) {
    ASSIGN_OR_RETURN(options.fsverity_certs,
                     ReadTrustFile("--fsverity-cert", "VERITY_FSVERITY_CERT",
                                   *trust.fsverity_cert_file));
  }
  if (trust.log_key_file.has_value()) {
    ASSIGN_OR_RETURN(
        options.log_key,
        ReadTrustFile("--log-key", "VERITY_LOG_KEY", *trust.log_key_file));
  }
  if (trust.witness_keys_file.has_value()) {
    ASSIGN_OR_RETURN(options.witness_keys,
                     ReadTrustFile("--witness-keys", "VERITY_WITNESS_KEYS",
                                   *trust.witness_keys_file));
  } else if (trust.witness_threshold != 1) {
    return absl::InvalidArgumentError(
        "--witness-threshold needs --witness-keys");
  }
  options.witness_threshold = trust.witness_threshold;
  options.trusted_keys_threshold = trust.threshold;
  options.state_dir = trust.state_dir;
  options.max_unseen_statement_age =
      trust.max_statement_age.value_or(absl::InfiniteDuration());
  return sdk::Client::Create(options);
}

void WarnIfNameUnauthenticated(const TrustOptions& trust,
                               const client::BlobRef& blob,
                               absl::string_view command, std::FILE* err) {
  if (blob.digest.has_value() || trust.keys_file.has_value() ||
      !trust.fsverity_cert_file.has_value()) {
    return;
  }
  const std::string line = absl::StrCat(
      "verity ", command, ": warning: the name ", blob.name,
      " is not authenticated: without --trusted-keys the server says which "
      "blob it means, and --fsverity-cert proves only that a pinned key "
      "signed that blob\n");
  std::fputs(line.c_str(), err);
}

}  // namespace verity::cli
