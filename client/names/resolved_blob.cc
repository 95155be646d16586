#include "client/names/resolved_blob.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace verity::client {

absl::StatusOr<ResolvedBlob> ResolveBlob(sdk::Client& client,
                                         const BlobRef& blob) {
  absl::StatusOr<sdk::BlobInfo> info = absl::UnknownError("");
  if (blob.digest.has_value()) {
    ASSIGN_OR_RETURN(const sdk::Digest digest,
                     sdk::Digest::Parse(blob.ToString()));
    info = client.Stat(digest);
  } else {
    info = client.StatName(blob.name);
  }
  RETURN_IF_ERROR(info.status());
  const std::optional<sdk::NameStatementInfo>& statement = info->name_statement;
  const bool tree_is_signed = statement.has_value() && statement->verified;
  const bool tree = tree_is_signed ? statement->tree : info->tree_manifest;
  return ResolvedBlob{*std::move(info), tree, tree_is_signed};
}

absl::Status CheckTree(const ResolvedBlob& blob, const BlobRef& ref,
                       bool insist) {
  if (blob.tree) return absl::OkStatus();
  if (blob.tree_is_signed) {
    return absl::FailedPreconditionError(
        absl::StrCat(ref.ToString(), " is signed as a file, not a tree"));
  }
  if (insist) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      ref.ToString(), " (", blob.digest().ToString(),
      ") was not stored as a tree (`verity put DIR` stores one; --tree reads "
      "it as one all the same)"));
}

}  // namespace verity::client
