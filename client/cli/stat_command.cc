// Implements `verity stat` with the SDK's Stat or StatName.

#include "client/cli/stat_command.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "client/cli/trust_options.h"
#include "client/names/blob_ref.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity stat DIGEST_OR_NAME [--trusted-keys=FILE]\n"
    "                   [--trusted-keys-threshold=K] [--state-dir=DIR]\n"
    "By name, also shows the name's signed statement: its version, times and\n"
    "signer key ids, verified with --trusted-keys (else the server's word).\n";

std::string FormatStatement(const sdk::NameStatementInfo& statement) {
  std::string text =
      absl::StrCat("statement-version: ", statement.version,
                   "\nstatement-issued: ", Rfc3339(statement.issued),
                   "\nstatement-expires: ", Rfc3339(statement.expires), "\n");
  for (const std::string& id : statement.signer_key_ids) {
    absl::StrAppend(&text, "statement-signer: ", id, "\n");
  }
  absl::StrAppend(&text, "statement-verified: ",
                  statement.verified ? "yes" : "no (no trusted keys)", "\n");
  return text;
}

absl::Status Stat(const CommandLine& line, const TrustOptions& trust,
                  const client::BlobRef& blob, std::FILE* out) {
  ASSIGN_OR_RETURN(std::unique_ptr<sdk::Client> client,
                   CreateTrustingClient(line.connection, trust));
  absl::StatusOr<sdk::BlobInfo> info;
  if (blob.digest.has_value()) {
    ASSIGN_OR_RETURN(const sdk::Digest digest,
                     sdk::Digest::Parse(blob.ToString()));
    info = client->Stat(digest);
  } else {
    info = client->StatName(blob.name);
  }
  RETURN_IF_ERROR(info.status());
  const std::string text = FormatStat(*info);
  std::fwrite(text.data(), 1, text.size(), out);
  return absl::OkStatus();
}

}  // namespace

std::string FormatStat(const sdk::BlobInfo& info) {
  const bool sha512 = info.digest.algorithm() == sdk::DigestAlgorithm::kSha512;
  std::string text =
      absl::StrCat("digest: ", info.digest.ToString(), "\nsize: ", info.size,
                   "\nhash-algorithm: ", sha512 ? "sha512" : "sha256",
                   "\nblock-size: ", info.block_size,
                   "\nsalt: ", absl::BytesToHexString(info.salt),
                   "\ntree-size: ", info.tree_size, "\n");
  if (info.format == sdk::TreeFormat::kDmVerity) {
    absl::StrAppend(&text, "format: dm-verity\nroot-hash: ",
                    absl::BytesToHexString(info.root_hash), "\n");
  }
  for (const std::string& name : info.names) {
    absl::StrAppend(&text, "name: ", name, "\n");
  }
  if (info.name_statement.has_value()) {
    absl::StrAppend(&text, FormatStatement(*info.name_statement));
  }
  if (!info.fsverity_signature.empty()) {
    absl::StrAppend(&text, "fsverity-signature-bytes: ",
                    info.fsverity_signature.size(), "\n");
  }
  return text;
}

int RunStatCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const std::string usage = absl::StrCat(kUsage, kTrustUsage);
  if (AsksForHelp(argc, argv)) return PrintHelp(usage, out);
  TrustOptions trust = DefaultTrustOptions();
  absl::StatusOr<CommandLine> line =
      ParseCommandLine(argc, argv, TrustFlags(&trust));
  absl::StatusOr<client::BlobRef> blob = OneBlobOperand(line);
  if (!blob.ok()) return UsageError("stat", blob.status(), usage, err);
  WarnIfNameUnauthenticated(trust, *blob, "stat", err);
  return ReportStatus("stat", Stat(*line, trust, *blob, out), err);
}

}  // namespace verity::cli
