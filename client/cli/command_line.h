// Command-line parsing shared by the `verity` subcommands that talk to a
// server: the connection flags every one of them takes, plus its own.

#ifndef VERITYD_CLIENT_CLI_COMMAND_LINE_H_
#define VERITYD_CLIENT_CLI_COMMAND_LINE_H_

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/cli/connection.h"
#include "client/names/blob_ref.h"

namespace verity::cli {

// One option of a subcommand, parsed by getopt_long.
struct CommandFlag {
  const char* name;  // long name, without "--"
  char short_name;   // e.g. 'o' for -o; 0 for none
  bool takes_value;  // --name=VALUE / --name VALUE
  std::function<absl::Status(absl::string_view value)> apply;
};

// --NAME=VALUE storing VALUE in *field; an empty VALUE is INVALID_ARGUMENT
// ("--NAME is empty"): a file or a name, never "nothing".
CommandFlag StringFlag(const char* name, std::string* field);

// A parsed command line. Plain value.
struct CommandLine {
  client::ConnectionOptions connection;
  std::vector<std::string> operands;  // the non-option arguments, in order
};

// The connection defaults: --server comes from $VERITY_SERVER when it is set.
client::ConnectionOptions DefaultConnectionOptions();

// Parses `argv` (argv[0] is the subcommand's name; GNU getopt may permute
// the rest): the connection flags and `flags`. INVALID_ARGUMENT naming the
// option that is unknown, lacks its value, repeats, or fails `apply`.
absl::StatusOr<CommandLine> ParseCommandLine(
    int argc, char** argv, const std::vector<CommandFlag>& flags);

// Parses `flags` alone, for commands that talk to no server; returns the
// operands. Errors as ParseCommandLine's.
absl::StatusOr<std::vector<std::string>> ParseFlags(
    int argc, char** argv, const std::vector<CommandFlag>& flags);

// The single DIGEST_OR_NAME operand of `line`, or `line`'s error;
// INVALID_ARGUMENT unless there is exactly one operand.
absl::StatusOr<client::BlobRef> OneBlobOperand(
    const absl::StatusOr<CommandLine>& line);

// Prints `usage` and the connection flags to `out`, for --help; returns
// kExitOk.
int PrintHelp(absl::string_view usage, std::FILE* out);

// Prints "verity COMMAND: message", `usage` and the connection flags to
// `err`; returns kExitUsage.
int UsageError(absl::string_view command, const absl::Status& status,
               absl::string_view usage, std::FILE* err);

// Prints "verity COMMAND: message" to `err` unless `status` is OK; returns
// the exit code for `status`.
int ReportStatus(absl::string_view command, const absl::Status& status,
                 std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_COMMAND_LINE_H_
