// Implements `verity ls` with the SDK's List, one page at a time so that a
// large store is printed as it arrives.

#include "client/cli/ls_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] = "Usage: verity ls\n";

absl::Status List(const CommandLine& line, std::FILE* out) {
  ASSIGN_OR_RETURN(std::unique_ptr<sdk::Client> client,
                   client::CreateClient(line.connection));
  std::string token;
  do {
    ASSIGN_OR_RETURN(sdk::ListPage page, client->List(token, 0));
    std::string text;
    for (const sdk::BlobInfo& info : page.blobs) text += FormatListLine(info);
    std::fwrite(text.data(), 1, text.size(), out);
    // Tokens are opaque, but one that repeats would loop forever.
    if (!page.next_page_token.empty() && page.next_page_token == token) {
      return absl::InternalError(
          "the server returned the same page token twice");
    }
    token = std::move(page.next_page_token);
  } while (!token.empty());
  return absl::OkStatus();
}

}  // namespace

std::string FormatListLine(const sdk::BlobInfo& info) {
  std::string line = absl::StrCat(info.digest.ToString(), " ", info.size);
  if (!info.names.empty()) {
    absl::StrAppend(&line, " ", absl::StrJoin(info.names, " "));
  }
  return line + "\n";
}

int RunLsCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) return PrintHelp(kUsage, out);
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv, {});
  if (line.ok() && !line->operands.empty()) {
    line = absl::InvalidArgumentError("ls takes no arguments");
  }
  if (!line.ok()) return UsageError("ls", line.status(), kUsage, err);
  return ReportStatus("ls", List(*line, out), err);
}

}  // namespace verity::cli
