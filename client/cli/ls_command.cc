// Implements `verity ls` with the SDK's List, one page at a time so that a
// large store is printed as it arrives.

#include "client/cli/ls_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "client/cli/tree_transfer.h"
#include "client/cli/trust_options.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity ls [TREE] [--trusted-keys=FILE] [--trusted-keys-threshold=K]"
    "\n                        [--state-dir=DIR]\n"
    "Without TREE, lists the store's blobs, one a line: DIGEST SIZE "
    "[NAME...].\n"
    "With TREE (the digest or name of a tree, as `verity put DIR` stores\n"
    "one), lists its entries, its manifest verified: \"d 0755 PATH\",\n"
    "\"f MODE SIZE DIGEST PATH\" (MODE 0644, or 0755 if executable) and\n"
    "\"l PATH -> TARGET\".\n";

absl::Status List(sdk::Client& client, std::FILE* out) {
  std::string token;
  do {
    ASSIGN_OR_RETURN(sdk::ListPage page, client.List(token, 0));
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
  const std::string usage = absl::StrCat(kUsage, kTrustUsage);
  if (AsksForHelp(argc, argv)) return PrintHelp(usage, out);
  TrustOptions trust = DefaultTrustOptions();
  absl::StatusOr<CommandLine> line =
      ParseCommandLine(argc, argv, TrustFlags(&trust));
  if (line.ok() && line->operands.size() > 1) {
    line = absl::InvalidArgumentError("ls takes at most one TREE");
  }
  if (!line.ok()) return UsageError("ls", line.status(), usage, err);
  absl::StatusOr<client::BlobRef> tree;
  if (!line->operands.empty()) {
    tree = client::ParseBlobRef(line->operands[0]);
    if (!tree.ok()) return UsageError("ls", tree.status(), usage, err);
  }
  absl::StatusOr<std::unique_ptr<sdk::Client>> client =
      CreateTrustingClient(line->connection, trust);
  if (!client.ok()) return ReportStatus("ls", client.status(), err);
  if (line->operands.empty())
    return ReportStatus("ls", List(**client, out), err);
  WarnIfNameUnauthenticated(trust, *tree, "ls", err);
  return ReportStatus("ls", ListTree(**client, *tree, out), err);
}

}  // namespace verity::cli
