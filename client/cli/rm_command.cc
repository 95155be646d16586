// Implements `verity rm` with the SDK's Delete or DeleteName; prints nothing
// on success.

#include "client/cli/rm_command.h"

#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity rm DIGEST_OR_NAME [--force]\n"
    "By name, deletes the name and its history (the blobs stay until garbage\n"
    "collection finds nothing else reaches them). By digest, deletes the blob\n"
    "and the names pointing at it now (admin); a blob that a name's history\n"
    "reaches (itself, or a file of a tree it names) is refused, naming one\n"
    "such name, unless --force.\n";

absl::Status Delete(const CommandLine& line, const client::BlobRef& blob,
                    bool force) {
  ASSIGN_OR_RETURN(std::unique_ptr<sdk::Client> client,
                   client::CreateClient(line.connection));
  if (!blob.digest.has_value()) {
    if (force) {
      return absl::InvalidArgumentError("--force is for a DIGEST, not a name");
    }
    return client->DeleteName(blob.name);
  }
  ASSIGN_OR_RETURN(const sdk::Digest digest,
                   sdk::Digest::Parse(blob.ToString()));
  return client->Delete(digest, force);
}

}  // namespace

int RunRmCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) return PrintHelp(kUsage, out);
  bool force = false;
  absl::StatusOr<CommandLine> line = ParseCommandLine(
      argc, argv, {{"force", 0, false, [&force](absl::string_view) {
                      force = true;
                      return absl::OkStatus();
                    }}});
  absl::StatusOr<client::BlobRef> blob = OneBlobOperand(line);
  if (!blob.ok()) return UsageError("rm", blob.status(), kUsage, err);
  return ReportStatus("rm", Delete(*line, *blob, force), err);
}

}  // namespace verity::cli
