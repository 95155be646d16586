// Implements `verity history` with the SDK's History, and a Stat per version
// for whether its blob is a tree, a file, or gone.

#include "client/cli/history_command.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "client/cli/trust_options.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity history NAME [--trusted-keys=FILE]\n"
    "                           [--trusted-keys-threshold=K]\n"
    "The versions the server keeps of NAME (its --name_history), newest\n"
    "first, one a line: INDEX DIGEST KIND written=TIME, then the signed\n"
    "statement's version=N issued=TIME signers=IDS verified=yes|no (verified:\n"
    "signed by --trusted-keys for this name and digest; old versions are\n"
    "expired by nature, and that is not checked), or \"unsigned\". KIND is\n"
    "what the statement says (tree or file), else what the server says, or\n"
    "\"gone\" if the blob is no longer stored. To go back to an older\n"
    "release, sign its digest again with a new version (`verity sign`).\n";

// What the version's blob is: what its statement says, else the server.
absl::StatusOr<VersionBlob> BlobOf(sdk::Client& client,
                                   const sdk::NameVersionInfo& version) {
  const absl::StatusOr<sdk::BlobInfo> info = client.Stat(version.digest);
  if (absl::IsNotFound(info.status())) return VersionBlob::kGone;
  RETURN_IF_ERROR(info.status());
  const bool tree = version.statement.has_value() ? version.statement->tree
                                                  : info->tree_manifest;
  return tree ? VersionBlob::kTree : VersionBlob::kFile;
}

absl::Status History(sdk::Client& client, absl::string_view name,
                     std::FILE* out) {
  ASSIGN_OR_RETURN(const std::vector<sdk::NameVersionInfo> versions,
                   client.History(name));
  std::string text;
  for (size_t i = 0; i < versions.size(); ++i) {
    ASSIGN_OR_RETURN(const VersionBlob blob, BlobOf(client, versions[i]));
    text += FormatHistoryLine(i, versions[i], blob);
  }
  std::fwrite(text.data(), 1, text.size(), out);
  return absl::OkStatus();
}

}  // namespace

std::string FormatHistoryLine(size_t index, const sdk::NameVersionInfo& version,
                              VersionBlob blob) {
  const char* kind = blob == VersionBlob::kGone   ? "gone"
                     : blob == VersionBlob::kTree ? "tree"
                                                  : "file";
  const std::string written =
      version.written == absl::InfinitePast() ? "-" : Rfc3339(version.written);
  std::string line = absl::StrCat(index, " ", version.digest.ToString(), " ",
                                  kind, " written=", written);
  if (!version.statement.has_value()) return line + " unsigned\n";
  const sdk::NameStatementInfo& statement = *version.statement;
  absl::StrAppend(&line, " version=", statement.version,
                  " issued=", Rfc3339(statement.issued),
                  " signers=", absl::StrJoin(statement.signer_key_ids, ","),
                  " verified=", statement.verified ? "yes" : "no", "\n");
  return line;
}

int RunHistoryCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const std::string usage = absl::StrCat(kUsage, kTrustUsage);
  if (AsksForHelp(argc, argv)) return PrintHelp(usage, out);
  TrustOptions trust = DefaultTrustOptions();
  absl::StatusOr<CommandLine> line =
      ParseCommandLine(argc, argv, TrustFlags(&trust));
  if (line.ok() && line->operands.size() != 1) {
    line = absl::InvalidArgumentError("history takes one NAME");
  }
  if (!line.ok()) return UsageError("history", line.status(), usage, err);
  absl::StatusOr<std::unique_ptr<sdk::Client>> client =
      CreateTrustingClient(line->connection, trust);
  if (!client.ok()) return ReportStatus("history", client.status(), err);
  return ReportStatus("history", History(**client, line->operands[0], out),
                      err);
}

}  // namespace verity::cli
