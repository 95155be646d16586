// Implements the CLI's signing on lib's SignNameStatement; the key's PEM
// text is wiped once parsed (the key object wipes itself).

#include "client/cli/name_signing.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/cli/flag_values.h"
#include "client/sdk/seen_names.h"
#include "client/sdk/signed_journal.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"

namespace verity::cli {
namespace {

constexpr size_t kMaxKeyFileBytes = 16 << 10;

}  // namespace

absl::StatusOr<Ed25519PrivateKey> ReadPrivateKey(const std::string& path) {
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

namespace {

// Where this publisher records what `signer` signed.
absl::StatusOr<client::SeenNamesStore> SignedRecord(
    const SigningOptions& options, const Ed25519PublicKey& signer) {
  std::string dir = options.state_dir;
  if (dir.empty()) {
    ASSIGN_OR_RETURN(dir, client::DefaultStateDir());
  }
  return client::SeenNamesStore(std::move(dir), client::SeenNamesKind::kSigned,
                                KeyIdToHex(signer.id()));
}

}  // namespace

std::vector<CommandFlag> SigningFlags(SigningOptions* options,
                                      const char* key_flag) {
  return {
      StringFlag(key_flag, &options->key_file),
      {"version", 0, true,
       [options](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(options->version, ParseUint64Flag("--version", v));
         if (*options->version == 0) {
           return absl::InvalidArgumentError("--version must be at least 1");
         }
         return absl::OkStatus();
       }},
      {"state-dir", 0, true,
       [options](absl::string_view v) -> absl::Status {
         if (v.empty()) {
           return absl::InvalidArgumentError("--state-dir is empty");
         }
         options->state_dir = std::string(v);
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

absl::StatusOr<uint64_t> VerifiedStoredVersion(sdk::Client& client,
                                               absl::string_view name,
                                               const Ed25519PublicKey& signer) {
  const absl::StatusOr<sdk::BlobInfo> info = client.StatName(name);
  if (absl::IsNotFound(info.status())) return 0;
  RETURN_IF_ERROR(info.status());
  if (!info->name_statement.has_value()) return 0;
  const absl::StatusOr<NameStatement> stored =
      ParseNameStatement(info->name_statement->encoded);
  ASSIGN_OR_RETURN(const TrustedKeys keys, TrustedKeys::Create({signer}));
  if (!stored.ok() || !CheckNameStatementSigned(*stored, keys, name).ok()) {
    return 0;
  }
  return stored->claim.version;
}

absl::StatusOr<std::string> SignName(const SigningOptions& options,
                                     absl::string_view name,
                                     const ParsedDigest& digest, NameKind kind,
                                     sdk::Client* client) {
  ASSIGN_OR_RETURN(const Ed25519PrivateKey key,
                   ReadPrivateKey(options.key_file));
  ASSIGN_OR_RETURN(const client::SeenNamesStore record,
                   SignedRecord(options, key.public_key()));
  ASSIGN_OR_RETURN(const SeenName signed_before, record.Lookup(name));
  uint64_t known = signed_before.version;
  if (client != nullptr) {
    ASSIGN_OR_RETURN(const uint64_t stored,
                     VerifiedStoredVersion(*client, name, key.public_key()));
    known = std::max(known, stored);
  }
  NameClaim claim;
  claim.name = std::string(name);
  claim.digest = digest;
  claim.kind = kind;
  const absl::Time now = absl::Now();
  ASSIGN_OR_RETURN(claim.version, NextNameVersion(options.version, known, now));
  // The encoding keeps whole seconds.
  claim.issued = absl::FromUnixSeconds(absl::ToUnixSeconds(now));
  claim.expires =
      claim.issued + absl::Trunc(options.expires_in, absl::Seconds(1));
  const Ed25519PrivateKey* keys[] = {&key};
  ASSIGN_OR_RETURN(std::string encoded, SignNameStatement(claim, keys));
  // Recorded before anyone can see it: a statement published and then
  // forgotten by a crash would let the next one repeat its version.
  ASSIGN_OR_RETURN(const NameStatement statement, ParseNameStatement(encoded));
  RETURN_IF_ERROR(record.CheckAndRecord(name, statement));
  // And journaled, for `verity audit` to tell it from one this publisher
  // never made.
  RETURN_IF_ERROR(
      client::SignedJournal(record.dir(), KeyIdToHex(key.public_key().id()))
          .Append(statement));
  return encoded;
}

}  // namespace verity::cli
