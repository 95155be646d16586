// Implements NameTrust over lib's statement checks and the seen-names store.

#include "client/sdk/name_trust.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/tree/descriptor.h"

namespace verity::client {
namespace {

absl::Status Refused(absl::string_view name, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("refused name '", name, "': ", why));
}

std::vector<SeenNamesStore> StoresOf(const TrustedKeys& keys,
                                     const std::string& dir) {
  std::vector<SeenNamesStore> stores;
  for (const Ed25519PublicKey& key : keys.keys()) {
    stores.emplace_back(dir, SeenNamesKind::kAccepted, KeyIdToHex(key.id()));
  }
  return stores;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NameTrust>> NameTrust::Create(
    const sdk::ClientOptions& options) {
  if (options.trusted_keys.empty()) return nullptr;
  absl::StatusOr<TrustedKeys> keys = TrustedKeys::FromPem(
      options.trusted_keys, options.trusted_keys_threshold);
  if (!keys.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("trusted keys: ", keys.status().message()));
  }
  std::string dir = options.state_dir;
  if (dir.empty()) {
    ASSIGN_OR_RETURN(dir, DefaultStateDir());
  }
  return std::make_unique<NameTrust>(*std::move(keys), std::move(dir),
                                     options.max_unseen_statement_age);
}

NameTrust::NameTrust(TrustedKeys keys, std::string state_dir,
                     absl::Duration max_unseen_age)
    : keys_(std::move(keys)),
      seen_(StoresOf(keys_, state_dir)),
      max_unseen_age_(max_unseen_age) {}

absl::Status NameTrust::CheckAndRecordSeen(absl::string_view name,
                                           const NameStatement& statement,
                                           absl::Time now) const {
  // Every record is checked before any is written, so a refused statement
  // raises none of them.
  bool seen_before = false;
  for (const SeenNamesStore& seen : seen_) {
    ASSIGN_OR_RETURN(const SeenName recorded, seen.Lookup(name));
    if (absl::Status s = CheckNotRolledBack(recorded, statement); !s.ok()) {
      return Refused(
          name, absl::StrCat(s.message(), " (state file ", seen.path(), ")"));
    }
    seen_before |= recorded.version != 0;
  }
  const absl::Duration age = now - statement.claim.issued;
  if (!seen_before && age > max_unseen_age_) {
    return Refused(
        name, absl::StrCat(
                  "this client has no record of it, and its statement was "
                  "issued ",
                  absl::FormatDuration(absl::Trunc(age, absl::Seconds(1))),
                  " ago, more than the ", absl::FormatDuration(max_unseen_age_),
                  " a first statement may be (--max-statement-age): a "
                  "store writer may be serving an old one"));
  }
  // Recorded only under the keys that signed it: once a key is removed from
  // the trusted set, the versions it alone raised no longer count.
  for (const KeyId& signer : TrustedSigners(statement, keys_)) {
    const SeenNamesStore& seen = StoreOf(signer);
    // Checks again under the file's lock: another client may have recorded a
    // newer version since.
    if (absl::Status s = seen.CheckAndRecord(name, statement); !s.ok()) {
      if (!absl::IsFailedPrecondition(s)) return s;
      return Refused(
          name, absl::StrCat(s.message(), " (state file ", seen.path(), ")"));
    }
  }
  return absl::OkStatus();
}

const SeenNamesStore& NameTrust::StoreOf(const KeyId& signer) const {
  const std::vector<Ed25519PublicKey>& keys = keys_.keys();
  size_t i = 0;
  while (keys[i].id() != signer) ++i;  // TrustedSigners lists trusted keys
  return seen_[i];
}

absl::StatusOr<NameStatement> NameTrust::Check(absl::string_view name,
                                               const v1::BlobInfo& info,
                                               absl::Time now) const {
  if (info.name_statement().empty()) {
    return Refused(name, "the server sent no signed statement for it");
  }
  absl::StatusOr<NameStatement> statement =
      ParseNameStatement(info.name_statement());
  if (!statement.ok()) {
    return Refused(name, absl::StrCat("its statement is malformed: ",
                                      statement.status().message()));
  }
  if (absl::Status s = CheckNameStatement(*statement, keys_, name, now);
      !s.ok()) {
    return Refused(name, s.message());
  }
  const absl::StatusOr<ParsedDigest> named = ParseDigest(info.digest());
  if (!named.ok() || *named != statement->claim.digest) {
    return Refused(name, absl::StrCat("the server named ", info.digest(),
                                      " but the signed statement says ",
                                      statement->claim.digest.ToString()));
  }
  RETURN_IF_ERROR(CheckAndRecordSeen(name, *statement, now));
  return statement;
}

}  // namespace verity::client
