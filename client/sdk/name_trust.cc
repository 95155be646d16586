// Implements NameTrust over lib's statement checks and the seen-names store.

#include "client/sdk/name_trust.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/descriptor.h"
#include "lib/status_macros.h"

namespace verity::client {
namespace {

absl::Status Refused(absl::string_view name, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("refused name '", name, "': ", why));
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
  return std::make_unique<NameTrust>(*std::move(keys), std::move(dir));
}

NameTrust::NameTrust(TrustedKeys keys, std::string state_dir)
    : keys_(std::move(keys)), seen_(std::move(state_dir), keys_.RootId()) {}

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
  if (absl::Status s = seen_.CheckAndRecord(name, *statement); !s.ok()) {
    if (!absl::IsFailedPrecondition(s)) return s;
    return Refused(
        name, absl::StrCat(s.message(), " (state file ", seen_.path(), ")"));
  }
  return statement;
}

}  // namespace verity::client
