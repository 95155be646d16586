// Implements NamePolicy over lib/name_statement's checks.

#include "server/rpc/name_policy.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"

namespace verity::server {
namespace {

// INVALID_ARGUMENT unless `statement` binds `digest`.
absl::Status CheckBinds(const NameStatement& statement,
                        const ParsedDigest& digest) {
  if (statement.claim.digest == digest) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the name statement for \"", statement.claim.name, "\" binds ",
      statement.claim.digest.ToString(), ", not the blob ", digest.ToString()));
}

// The statement the name has now, if it parses. One that does not (written
// behind the server's back, or damaged) cannot be superseded by version and
// is replaced: refusing would leave the name unwritable for good, and
// clients check whatever they are given.
std::optional<NameStatement> Current(absl::string_view stored) {
  if (stored.empty()) return std::nullopt;
  absl::StatusOr<NameStatement> parsed = ParseNameStatement(stored);
  if (!parsed.ok()) return std::nullopt;
  return *std::move(parsed);
}

}  // namespace

absl::StatusOr<NameWrite> NamePolicy::Prepare(
    absl::string_view name, absl::string_view statement,
    const std::optional<ParsedDigest>& digest, absl::Time now) const {
  NameWrite write{std::string(name), std::string(statement), nullptr};
  if (statement.empty()) {
    if (!keys_.has_value()) return write;
    return absl::InvalidArgumentError(absl::StrCat(
        "writing the name \"", name,
        "\" needs a name statement signed by a key of --name_keys"));
  }
  absl::StatusOr<NameStatement> parsed = ParseNameStatement(statement);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the name statement for \"", name,
                     "\" does not parse: ", parsed.status().message()));
  }
  if (keys_.has_value()) {
    RETURN_IF_ERROR(CheckNameStatement(*parsed, *keys_, name, now));
  } else if (parsed->claim.name != name) {
    return absl::InvalidArgumentError(
        absl::StrCat("a name statement for \"", parsed->claim.name,
                     "\" was given for \"", name, "\""));
  }
  if (digest.has_value()) RETURN_IF_ERROR(CheckBinds(*parsed, *digest));
  auto next = std::make_shared<const NameStatement>(*std::move(parsed));
  write.check = [next, versioned = keys_.has_value()](
                    const ParsedDigest& blob, absl::string_view stored) {
    RETURN_IF_ERROR(CheckBinds(*next, blob));
    const std::optional<NameStatement> current = Current(stored);
    if (!versioned || !current.has_value()) return absl::OkStatus();
    return CheckSupersedes(*current, *next);
  };
  return write;
}

}  // namespace verity::server
