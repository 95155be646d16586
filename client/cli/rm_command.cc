// Implements `verity rm` with the SDK's Delete or DeleteName; prints nothing
// on success.

#include "client/cli/rm_command.h"

#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] = "Usage: verity rm DIGEST_OR_NAME\n";

absl::Status Delete(const CommandLine& line, const client::BlobRef& blob) {
  ASSIGN_OR_RETURN(std::unique_ptr<sdk::Client> client,
                   client::CreateClient(line.connection));
  if (!blob.digest.has_value()) return client->DeleteName(blob.name);
  ASSIGN_OR_RETURN(const sdk::Digest digest,
                   sdk::Digest::Parse(blob.ToString()));
  return client->Delete(digest);
}

}  // namespace

int RunRmCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) return PrintHelp(kUsage, out);
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv, {});
  absl::StatusOr<client::BlobRef> blob = OneBlobOperand(line);
  if (!blob.ok()) return UsageError("rm", blob.status(), kUsage, err);
  return ReportStatus("rm", Delete(*line, *blob), err);
}

}  // namespace verity::cli
