// Implements the shared parser on getopt_long, as digest_command does, with
// the option table built from the connection flags and the command's own.

#include "client/cli/command_line.h"

#include <getopt.h>

#include <cstdlib>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "lib/base/file_util.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"

namespace verity::cli {
namespace {

constexpr char kConnectionUsage[] =
    "Connection: [--server=HOST:PORT] (default $VERITY_SERVER, else "
    "127.0.0.1:50051;\n"
    "            dns:///NAME:PORT balances over every address of NAME)\n"
    "            [--tls-ca=FILE [--tls-cert=FILE --tls-key=FILE]]\n"
    "            [--token-file=FILE] (a bearer token; default "
    "$VERITY_TOKEN)\n"
    "            [--timeout=SECONDS] (per RPC attempt; default 60, 0 for "
    "none)\n";

// A token file holds one token; more than this is not one.
constexpr size_t kMaxTokenFileBytes = 4096;

// The token in `path`, without the whitespace around it. Every failure is
// INVALID_ARGUMENT, as for any flag whose value is unusable.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  const absl::StatusOr<std::string> text =
      ReadSmallFile(path, kMaxTokenFileBytes);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--token-file: ", text.status().message()));
  }
  const absl::string_view token = absl::StripAsciiWhitespace(*text);
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--token-file ", path, " is empty"));
  }
  return std::string(token);
}

// getopt_long returns this plus the option's index for long-only options.
constexpr int kLongOnlyBase = 256;

std::vector<CommandFlag> ConnectionFlags(client::ConnectionOptions* options) {
  auto set = [](std::string* field) {
    return [field](absl::string_view value) {
      *field = std::string(value);
      return absl::OkStatus();
    };
  };
  return {
      {"server", 0, true, set(&options->server)},
      {"tls-ca", 0, true, set(&options->tls_ca_file)},
      {"tls-cert", 0, true, set(&options->tls_cert_file)},
      {"tls-key", 0, true, set(&options->tls_key_file)},
      {"token-file", 0, true,
       [options](absl::string_view path) -> absl::Status {
         ASSIGN_OR_RETURN(options->token, ReadTokenFile(std::string(path)));
         return absl::OkStatus();
       }},
      {"timeout", 0, true,
       [options](absl::string_view value) -> absl::Status {
         ASSIGN_OR_RETURN(options->timeout,
                          ParseSecondsFlag("--timeout", value));
         return absl::OkStatus();
       }},
  };
}

// getopt_long's tables for `flags`: the long options and the short string.
struct GetoptTables {
  std::vector<struct option> long_options;
  std::string short_options = ":";  // ':' first: report a missing value
};

GetoptTables MakeTables(const std::vector<CommandFlag>& flags) {
  GetoptTables tables;
  for (size_t i = 0; i < flags.size(); ++i) {
    const int has_arg = flags[i].takes_value ? required_argument : no_argument;
    const int val = flags[i].short_name ? flags[i].short_name
                                        : kLongOnlyBase + static_cast<int>(i);
    tables.long_options.push_back({flags[i].name, has_arg, nullptr, val});
    if (flags[i].short_name) {
      tables.short_options += flags[i].short_name;
      if (flags[i].takes_value) tables.short_options += ':';
    }
  }
  tables.long_options.push_back({nullptr, 0, nullptr, 0});
  return tables;
}

// The index in `flags` of what getopt_long returned, or -1.
int FlagIndex(const std::vector<CommandFlag>& flags, int option) {
  if (option >= kLongOnlyBase) return option - kLongOnlyBase;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i].short_name == option) return static_cast<int>(i);
  }
  return -1;
}

absl::Status BadOption(int option, char** argv) {
  const std::string text = argv[optind - 1];
  if (option == ':') {
    return absl::InvalidArgumentError(
        absl::StrCat("option '", text, "' needs a value"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unrecognized option '", text, "'"));
}

}  // namespace

client::ConnectionOptions DefaultConnectionOptions() {
  client::ConnectionOptions options;
  if (const char* server = std::getenv("VERITY_SERVER");
      server != nullptr && *server != '\0') {
    options.server = server;
  }
  if (const char* token = std::getenv("VERITY_TOKEN"); token != nullptr) {
    options.token = std::string(absl::StripAsciiWhitespace(token));
  }
  return options;
}

absl::StatusOr<std::vector<std::string>> ParseFlags(
    int argc, char** argv, const std::vector<CommandFlag>& flags) {
  const GetoptTables tables = MakeTables(flags);
  absl::flat_hash_set<int> seen;
  optind = 0;  // glibc: restart scanning, so parsing can run more than once
  opterr = 0;
  int option;
  while ((option = getopt_long(argc, argv, tables.short_options.c_str(),
                               tables.long_options.data(), nullptr)) != -1) {
    const int index = FlagIndex(flags, option);
    if (index < 0) return BadOption(option, argv);
    if (!seen.insert(index).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flags[index].name, " can only be given once"));
    }
    RETURN_IF_ERROR(flags[index].apply(optarg ? optarg : ""));
  }
  return std::vector<std::string>(argv + optind, argv + argc);
}

absl::StatusOr<CommandLine> ParseCommandLine(
    int argc, char** argv, const std::vector<CommandFlag>& command_flags) {
  CommandLine line;
  line.connection = DefaultConnectionOptions();
  std::vector<CommandFlag> flags = ConnectionFlags(&line.connection);
  flags.insert(flags.end(), command_flags.begin(), command_flags.end());
  ASSIGN_OR_RETURN(line.operands, ParseFlags(argc, argv, flags));
  RETURN_IF_ERROR(client::ValidateConnectionOptions(line.connection));
  return line;
}

absl::StatusOr<client::BlobRef> OneBlobOperand(
    const absl::StatusOr<CommandLine>& line) {
  if (!line.ok()) return line.status();
  if (line->operands.size() != 1) {
    return absl::InvalidArgumentError("expected one DIGEST_OR_NAME");
  }
  return client::ParseBlobRef(line->operands[0]);
}

int PrintHelp(absl::string_view usage, std::FILE* out) {
  std::fprintf(out, "%s%s", std::string(usage).c_str(), kConnectionUsage);
  return kExitOk;
}

int UsageError(absl::string_view command, const absl::Status& status,
               absl::string_view usage, std::FILE* err) {
  std::fprintf(err, "verity %s: %s\n%s%s", std::string(command).c_str(),
               std::string(status.message()).c_str(),
               std::string(usage).c_str(), kConnectionUsage);
  return kExitUsage;
}

CommandFlag StringFlag(const char* name, std::string* field) {
  return {name, 0, true, [name, field](absl::string_view v) -> absl::Status {
            if (v.empty()) {
              return absl::InvalidArgumentError(
                  absl::StrCat("--", name, " is empty"));
            }
            *field = std::string(v);
            return absl::OkStatus();
          }};
}

int ReportStatus(absl::string_view command, const absl::Status& status,
                 std::FILE* err) {
  if (status.ok()) return kExitOk;
  // The message may quote a server or a manifest: one line, nothing a
  // terminal acts on.
  PrintLine(err, absl::StrCat("verity ", command), status.message());
  return ExitCodeFor(status);
}

}  // namespace verity::cli
