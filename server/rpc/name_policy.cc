// Implements NamePolicy over lib/name_statement's checks.

#include "server/rpc/name_policy.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

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

// The statement that holds the name now: one that parses and that `keys`
// sign for `name`. Anything else (written behind the server's back, signed
// by a key no longer trusted, damaged) sets no version floor and is
// replaced: a planted statement must not hold the name, and clients check
// whatever they are given.
std::optional<NameStatement> VersionFloor(absl::string_view stored,
                                          const TrustedKeys& keys,
                                          absl::string_view name) {
  if (stored.empty()) return std::nullopt;
  absl::StatusOr<NameStatement> parsed = ParseNameStatement(stored);
  if (!parsed.ok() || !CheckNameStatementSigned(*parsed, keys, name).ok()) {
    return std::nullopt;
  }
  return *std::move(parsed);
}

}  // namespace

absl::StatusOr<NameWrite> NamePolicy::Prepare(
    absl::string_view name, absl::string_view statement,
    const std::optional<ParsedDigest>& digest, NameKind kind,
    absl::Time now) const {
  NameWrite write{std::string(name), std::string(statement), nullptr};
  if (statement.empty()) {
    if (keys_ == nullptr) return write;
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
  if (keys_ != nullptr) {
    RETURN_IF_ERROR(CheckNameStatement(*parsed, *keys_, name, now));
  } else if (parsed->claim.name != name) {
    return absl::InvalidArgumentError(
        absl::StrCat("a name statement for \"", parsed->claim.name,
                     "\" was given for \"", name, "\""));
  }
  if (digest.has_value()) RETURN_IF_ERROR(CheckBinds(*parsed, *digest));
  if (parsed->claim.kind != kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the name statement for \"", name, "\" says it means a ",
        NameKindText(parsed->claim.kind), ", and the blob is ",
        kind == NameKind::kTree ? "a tree manifest" : "not a tree manifest",
        " (sign a tree's name with --tree, as `verity put DIR` does)"));
  }
  auto next = std::make_shared<const NameStatement>(*std::move(parsed));
  write.check = [next, keys = keys_](const ParsedDigest& blob,
                                     absl::string_view stored) {
    RETURN_IF_ERROR(CheckBinds(*next, blob));
    if (keys == nullptr) return absl::OkStatus();
    const std::optional<NameStatement> current =
        VersionFloor(stored, *keys, next->claim.name);
    if (!current.has_value()) return absl::OkStatus();
    return CheckSupersedes(*current, *next);
  };
  return write;
}

}  // namespace verity::server
