// Implements `verity gc` and `verity du` with the SDK's Collect.

#include "client/cli/gc_command.h"

#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity gc [--dry-run]\n"
    "Runs one garbage collection on the server now and waits for it (admin):\n"
    "every blob that no name's retained history reaches (the blob of one of\n"
    "its versions, or a file of a version that is a tree) and that nobody\n"
    "used within the server's --gc_grace is deleted. --dry-run counts them\n"
    "and deletes nothing. Fails (exit 5) while another replica's collection\n"
    "holds the store.\n";

constexpr char kDuUsage[] =
    "Usage: verity du\n"
    "What the server's store holds (admin): its blobs and their data bytes,\n"
    "how much of it the roots reach (every name's retained history, and the\n"
    "files of its trees), and how much a garbage collection would free now,\n"
    "as a `verity gc --dry-run` finds it. Reads every name and lists every\n"
    "blob: on a large bucket it takes a while.\n";

// Runs Collect (a dry run for du) and prints what `format` makes of it.
absl::Status Collect(const CommandLine& line, bool dry_run,
                     std::string (*format)(const sdk::CollectResult&, bool),
                     std::FILE* out) {
  ASSIGN_OR_RETURN(std::unique_ptr<sdk::Client> client,
                   client::CreateClient(line.connection));
  ASSIGN_OR_RETURN(const sdk::CollectResult result, client->Collect(dry_run));
  const std::string text = format(result, dry_run);
  std::fwrite(text.data(), 1, text.size(), out);
  return absl::OkStatus();
}

std::string FormatDu(const sdk::CollectResult& result, bool /*dry_run*/) {
  return FormatUsage(result);
}

}  // namespace

std::string FormatCollectResult(const sdk::CollectResult& result,
                                bool dry_run) {
  return absl::StrCat(
      dry_run ? "would free " : "freed ", result.freed, " blobs (",
      result.freed_bytes, " bytes) of ", result.blobs, " stored (",
      result.bytes, " bytes): ", result.reachable, " reachable from ",
      result.names, " names (", result.trees, " trees), ", result.young,
      " unreachable kept within the grace; ", result.quarantined_freed, " of ",
      result.quarantined, " quarantined ", dry_run ? "would be freed" : "freed",
      "; ", result.leftovers, " leftover objects (", result.leftover_bytes,
      " bytes) ", dry_run ? "would be freed" : "freed", "; took ",
      absl::FormatDuration(absl::Trunc(result.took, absl::Milliseconds(1))),
      "\n");
}

std::string FormatUsage(const sdk::CollectResult& result) {
  return absl::StrCat(
      "stored: ", result.blobs, " blobs, ", result.bytes, " bytes\n",
      "reachable: ", result.reachable, " blobs, ", result.reachable_bytes,
      " bytes, from ", result.names, " names (", result.trees, " trees)\n",
      "gc would free: ", result.freed, " blobs, ", result.freed_bytes,
      " bytes (", result.young, " more unreachable, kept within the grace)\n",
      "quarantined: ", result.quarantined, " blobs, ", result.quarantined_freed,
      " of them gc would free\n", "leftovers: ", result.leftovers, " objects, ",
      result.leftover_bytes, " bytes, that no blob owns and gc would free\n");
}

int RunGcCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) return PrintHelp(kUsage, out);
  bool dry_run = false;
  absl::StatusOr<CommandLine> line = ParseCommandLine(
      argc, argv, {{"dry-run", 0, false, [&dry_run](absl::string_view) {
                      dry_run = true;
                      return absl::OkStatus();
                    }}});
  if (line.ok() && !line->operands.empty()) {
    line = absl::InvalidArgumentError("gc takes no operand");
  }
  if (!line.ok()) return UsageError("gc", line.status(), kUsage, err);
  return ReportStatus("gc", Collect(*line, dry_run, FormatCollectResult, out),
                      err);
}

int RunDuCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) return PrintHelp(kDuUsage, out);
  absl::StatusOr<CommandLine> line = ParseCommandLine(argc, argv, {});
  if (line.ok() && !line->operands.empty()) {
    line = absl::InvalidArgumentError("du takes no operand");
  }
  if (!line.ok()) return UsageError("du", line.status(), kDuUsage, err);
  return ReportStatus("du", Collect(*line, /*dry_run=*/true, FormatDu, out),
                      err);
}

}  // namespace verity::cli
