// Implements the CLI's signing on lib's SignNameStatement; the key's PEM
// text is wiped once parsed (the key object wipes itself).

#include "client/cli/name_signing.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "client/cli/flag_values.h"
#include "lib/ed25519_key.h"
#include "lib/file_util.h"
#include "lib/name_statement.h"
#include "lib/status_macros.h"

namespace verity::cli {
namespace {

constexpr size_t kMaxKeyFileBytes = 16 << 10;

absl::StatusOr<Ed25519PrivateKey> ReadKey(const std::string& path) {
  absl::StatusOr<std::string> pem = ReadSmallFile(path, kMaxKeyFileBytes);
  if (!pem.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("signing key: ", pem.status().message()));
  }
  absl::StatusOr<Ed25519PrivateKey> key = Ed25519PrivateKey::ParsePem(*pem);
  std::fill(pem->begin(), pem->end(), '\0');
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("signing key ", path, ": ", key.status().message()));
  }
  return key;
}

}  // namespace

std::vector<CommandFlag> SigningFlags(SigningOptions* options,
                                      const char* key_flag) {
  return {
      {key_flag, 0, true,
       [options, key_flag](absl::string_view v) -> absl::Status {
         if (v.empty()) {
           return absl::InvalidArgumentError(
               absl::StrCat("--", key_flag, " is empty"));
         }
         options->key_file = std::string(v);
         return absl::OkStatus();
       }},
      {"version", 0, true,
       [options](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(options->version, ParseUint64Flag("--version", v));
         if (*options->version == 0) {
           return absl::InvalidArgumentError("--version must be at least 1");
         }
         return absl::OkStatus();
       }},
      {"expires-in", 0, true,
       [options](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(options->expires_in,
                          ParseDurationFlag("--expires-in", v));
         return absl::OkStatus();
       }},
  };
}

absl::StatusOr<uint64_t> NextVersion(sdk::Client& client,
                                     absl::string_view name) {
  const absl::StatusOr<sdk::BlobInfo> info = client.StatName(name);
  if (absl::IsNotFound(info.status())) return 1;
  RETURN_IF_ERROR(info.status());
  if (!info->name_statement.has_value()) return 1;
  const uint64_t current = info->name_statement->version;
  if (current == UINT64_MAX) {
    return absl::FailedPreconditionError(
        absl::StrCat("the statement for ", name, " has the highest version"));
  }
  return current + 1;
}

absl::StatusOr<std::string> SignName(const SigningOptions& options,
                                     absl::string_view name,
                                     const ParsedDigest& digest,
                                     sdk::Client* client) {
  ASSIGN_OR_RETURN(const Ed25519PrivateKey key, ReadKey(options.key_file));
  NameClaim claim;
  claim.name = std::string(name);
  claim.digest = digest;
  if (options.version.has_value()) {
    claim.version = *options.version;
  } else {
    ASSIGN_OR_RETURN(claim.version, NextVersion(*client, name));
  }
  // The encoding keeps whole seconds.
  claim.issued = absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
  claim.expires =
      claim.issued + absl::Trunc(options.expires_in, absl::Seconds(1));
  const Ed25519PrivateKey* keys[] = {&key};
  return SignNameStatement(claim, keys);
}

}  // namespace verity::cli
