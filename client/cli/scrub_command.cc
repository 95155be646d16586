// Implements `verity scrub` with the SDK's Scrub.

#include "client/cli/scrub_command.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity scrub [--wait]\n"
    "Asks the server for a scrub pass over its whole store now (admin): every\n"
    "blob's data, tree and FEC area is read and checked at IDLE priority,\n"
    "within the server's --scrub_bytes_per_second; a bad block is repaired\n"
    "from FEC and written back, or the blob is reported as a read would\n"
    "report it (and quarantined under --on_corruption=quarantine). Returns at\n"
    "once; --wait waits for the pass and prints what it found, and fails\n"
    "(exit 5) while another replica's scrub holds the store.\n";

std::string Time(absl::Time time) {
  if (time == absl::UnixEpoch()) return "none";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

absl::Status Scrub(const CommandLine& line, bool wait, std::FILE* out) {
  ASSIGN_OR_RETURN(std::unique_ptr<sdk::Client> client,
                   client::CreateClient(line.connection));
  ASSIGN_OR_RETURN(const sdk::ScrubResult result, client->Scrub(wait));
  const std::string text = FormatScrubResult(result);
  std::fwrite(text.data(), 1, text.size(), out);
  return absl::OkStatus();
}

}  // namespace

std::string FormatScrubResult(const sdk::ScrubResult& result) {
  std::string text;
  if (result.waited) {
    absl::StrAppend(
        &text, "checked ", result.blobs, " blobs (", result.bytes,
        " bytes): ", result.bad_blocks, " bad blocks, ", result.repaired_blocks,
        " repaired, ", result.unrepairable, " blobs unrepairable, ",
        result.unread, " unread; took ",
        absl::FormatDuration(absl::Trunc(result.took, absl::Milliseconds(1))),
        "\n");
  }
  absl::StrAppend(&text,
                  result.pass_started == absl::UnixEpoch()
                      ? std::string("no pass is under way")
                      : absl::StrCat("a pass is under way since ",
                                     Time(result.pass_started),
                                     result.running ? " (on this server)" : ""),
                  "; last complete pass: ", Time(result.last_completed), "\n");
  return text;
}

int RunScrubCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) return PrintHelp(kUsage, out);
  bool wait = false;
  absl::StatusOr<CommandLine> line = ParseCommandLine(
      argc, argv, {{"wait", 0, false, [&wait](absl::string_view) {
                      wait = true;
                      return absl::OkStatus();
                    }}});
  if (line.ok() && !line->operands.empty()) {
    line = absl::InvalidArgumentError("scrub takes no operand");
  }
  if (!line.ok()) return UsageError("scrub", line.status(), kUsage, err);
  return ReportStatus("scrub", Scrub(*line, wait, out), err);
}

}  // namespace verity::cli
