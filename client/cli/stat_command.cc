// Implements `verity stat` with the SDK's Stat or StatName.

#include "client/cli/stat_command.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "client/cli/blob_ref.h"
#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "lib/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] = "Usage: verity stat DIGEST_OR_NAME\n";

absl::Status Stat(const CommandLine& line, const client::BlobRef& blob,
                  std::FILE* out) {
  ASSIGN_OR_RETURN(std::unique_ptr<sdk::Client> client,
                   client::CreateClient(line.connection));
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
  for (const std::string& name : info.names) {
    absl::StrAppend(&text, "name: ", name, "\n");
  }
  return text;
}

int RunStatCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) return PrintHelp(kUsage, out);
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv, {});
  absl::StatusOr<client::BlobRef> blob = OneBlobOperand(line);
  if (!blob.ok()) return UsageError("stat", blob.status(), kUsage, err);
  return ReportStatus("stat", Stat(*line, *blob, out), err);
}

}  // namespace verity::cli
