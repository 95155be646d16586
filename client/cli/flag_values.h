// Parsers for option values shared by the `verity` subcommands, so that every
// command accepts and rejects the same spellings.

#ifndef VERITYD_CLIENT_CLI_FLAG_VALUES_H_
#define VERITYD_CLIENT_CLI_FLAG_VALUES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace verity::cli {

// All return INVALID_ARGUMENT with a message naming the value.

// An even number of hex digits, as `fsverity digest --salt` takes.
absl::StatusOr<std::string> ParseHexFlag(absl::string_view what,
                                         absl::string_view hex);

// A power of two; whether the tree accepts it is checked later.
absl::StatusOr<uint32_t> ParseBlockSizeFlag(absl::string_view text);

// A decimal byte count or offset, naming `flag` (e.g. "--offset") on error.
absl::StatusOr<uint64_t> ParseUint64Flag(absl::string_view flag,
                                         absl::string_view text);

// The default of the thread counts the commands hash with: the CPUs this
// machine has, at least 1.
int MachineThreads();

// --parallel: from 1 to 64.
absl::StatusOr<int> ParseParallelFlag(absl::string_view text);

// True if the arguments after argv[0] ask for help: --help or -h before any
// "--". Checked before parsing, so that help works with any other arguments.
bool AsksForHelp(int argc, char** argv);

// Whole or fractional seconds, at least 0.
absl::StatusOr<absl::Duration> ParseSecondsFlag(absl::string_view flag,
                                                absl::string_view text);

// A positive duration: Go's and Abseil's form ("720h", "90m", "1h30m",
// "45s") or whole days ("30d").
absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view flag,
                                                 absl::string_view text);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_FLAG_VALUES_H_
