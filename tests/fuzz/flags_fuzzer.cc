// Fuzzes flag parsing: the `verity` CLI's option values (flag_values.h), its
// getopt_long command lines (command_line.h) and verityd's environment
// fallback (env_flags.h). Values are accepted exactly in their documented
// spellings and mean what they say; a command line parses the same way every
// time (getopt's globals are reset), hands back only its own arguments as
// operands, and never applies a flag twice.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/cli/command_line.h"
#include "client/cli/flag_values.h"
#include "server/env_flags.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/predicates.h"

namespace verity::fuzz {
namespace {

bool AllDigits(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The decimal value of `text` (digits only), or false if it exceeds 2^64-1.
bool DecimalValue(absl::string_view text, uint64_t* value) {
  *value = 0;
  for (char c : text) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (*value > (UINT64_MAX - digit) / 10) return false;
    *value = *value * 10 + digit;
  }
  return true;
}

void CheckValues(absl::string_view text) {
  // --salt: an even number of hex digits, the bytes they spell.
  const absl::StatusOr<std::string> hex = cli::ParseHexFlag("--salt", text);
  bool all_hex = text.size() % 2 == 0;
  for (char c : text) all_hex = all_hex && IsHexDigit(c);
  FUZZ_CHECK(hex.ok() == all_hex, hex.status().message());
  if (hex.ok()) {
    FUZZ_CHECK(absl::BytesToHexString(*hex) == absl::AsciiStrToLower(text), "");
  }

  // --offset, --length: digits only, below 2^64.
  uint64_t expected = 0;
  const bool decimal = AllDigits(text) && DecimalValue(text, &expected);
  const absl::StatusOr<uint64_t> number =
      cli::ParseUint64Flag("--offset", text);
  FUZZ_CHECK(number.ok() == decimal, number.status().message());
  if (number.ok()) FUZZ_CHECK(*number == expected, "");

  // --block-size: a power of two below 2^32; plain digits always work.
  const absl::StatusOr<uint32_t> block = cli::ParseBlockSizeFlag(text);
  if (block.ok()) {
    FUZZ_CHECK(*block != 0 && (*block & (*block - 1)) == 0, "");
  }
  if (decimal && expected != 0 && expected <= UINT32_MAX &&
      (expected & (expected - 1)) == 0) {
    FUZZ_CHECK(block.ok() && *block == expected, text);
  }

  // --timeout: digits and dots, finite, never negative; whole seconds are
  // what they say.
  const absl::StatusOr<absl::Duration> seconds =
      cli::ParseSecondsFlag("--timeout", text);
  if (seconds.ok()) {
    FUZZ_CHECK(text.find_first_not_of("0123456789.") == absl::string_view::npos,
               text);
    FUZZ_CHECK(*seconds >= absl::ZeroDuration(), text);
  }
  if (decimal && text.size() <= 9) {
    FUZZ_CHECK(seconds.ok() &&
                   *seconds == absl::Seconds(static_cast<int64_t>(expected)),
               text);
  }
}

// What a parse gave, comparable across runs.
struct Parsed {
  std::string status;
  std::string server, tls_ca, output;
  std::vector<std::string> operands;
  std::map<std::string, int> applied;  // flag -> times its apply ran

  bool operator==(const Parsed& o) const {
    return status == o.status && server == o.server && tls_ca == o.tls_ca &&
           output == o.output && operands == o.operands && applied == o.applied;
  }
};

Parsed ParseOnce(const std::vector<std::string>& args) {
  Parsed parsed;
  auto count = [&parsed](const char* flag) {
    return [&parsed, flag](absl::string_view value) -> absl::Status {
      ++parsed.applied[flag];
      if (std::string(flag) == "output") parsed.output = std::string(value);
      if (std::string(flag) == "offset") {
        return cli::ParseUint64Flag("--offset", value).status();
      }
      return absl::OkStatus();
    };
  };
  const std::vector<cli::CommandFlag> flags = {
      {"output", 'o', true, count("output")},
      {"offset", 0, true, count("offset")},
      {"verbose", 'v', false, count("verbose")},
  };
  // getopt_long permutes argv: a fresh copy each time.
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const absl::StatusOr<cli::CommandLine> line =
      cli::ParseCommandLine(static_cast<int>(args.size()), argv.data(), flags);
  parsed.status = line.status().ToString();
  if (!line.ok()) {
    FUZZ_CHECK(line.status().code() == absl::StatusCode::kInvalidArgument,
               parsed.status);
    return parsed;
  }
  parsed.server = line->connection.server;
  parsed.tls_ca = line->connection.tls_ca_file;
  parsed.operands = line->operands;
  return parsed;
}

void CheckCommandLine(absl::string_view text) {
  unsetenv("VERITY_SERVER");
  std::vector<std::string> args = {"get"};
  for (absl::string_view arg : absl::StrSplit(text, '\0')) {
    if (args.size() == 16) break;
    args.emplace_back(arg);
  }
  const Parsed first = ParseOnce(args);
  FUZZ_CHECK(ParseOnce(args) == first, "a second parse differs");
  for (const auto& [flag, times] : first.applied) {
    FUZZ_CHECK(times == 1, absl::StrCat(flag, " applied ", times, " times"));
  }
  if (first.status != "OK") return;
  // Operands are arguments, in their order; an option-like one only after
  // "--" (or "-" itself).
  size_t from = 1;
  size_t dashes = args.size();
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") {
      dashes = i;
      break;
    }
  }
  for (const std::string& operand : first.operands) {
    const bool option_like = operand.size() > 1 && operand[0] == '-';
    if (option_like && from <= dashes) from = dashes + 1;
    while (from < args.size() && args[from] != operand) ++from;
    FUZZ_CHECK(from < args.size(),
               absl::StrCat("operand '", operand, "' is out of place"));
    ++from;
  }
}

// The environment comes first, in the order of the flags, then argv.
void CheckEnvironment(FuzzInput& in) {
  const std::vector<std::string> flags = {"store", "listen", "max_streams"};
  std::vector<std::string> expected = {"verityd"};
  for (const std::string& flag : flags) {
    const std::string var = server::EnvVarForFlag("VERITYD_FUZZ_", flag);
    FUZZ_CHECK(var == "VERITYD_FUZZ_" + absl::AsciiStrToUpper(flag), var);
    std::string value = in.ShortString();
    value = value.substr(0, value.find('\0'));
    if (in.Bool()) {
      setenv(var.c_str(), value.c_str(), 1);
      expected.push_back(absl::StrCat("--", flag, "=", value));
    } else {
      unsetenv(var.c_str());
    }
  }
  std::vector<std::string> storage = {"verityd"};
  for (int i = static_cast<int>(in.Below(4)); i > 0; --i) {
    std::string arg = in.ShortString();
    storage.push_back(arg.substr(0, arg.find('\0')));
    expected.push_back(storage.back());
  }
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  const std::vector<std::string> args = server::ArgvWithEnvironment(
      static_cast<int>(argv.size()), argv.data(), "VERITYD_FUZZ_", flags);
  FUZZ_CHECK(args == expected, absl::StrJoin(args, " "));
  for (const std::string& flag : flags) {
    unsetenv(server::EnvVarForFlag("VERITYD_FUZZ_", flag).c_str());
  }
}

// The first byte picks the parser.
void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const absl::string_view text(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  switch (data[0] % 3) {
    case 0:
      CheckValues(text);
      break;
    case 1:
      CheckCommandLine(text);
      break;
    default: {
      FuzzInput in(data + 1, size - 1);
      CheckEnvironment(in);
    }
  }
}

}  // namespace
}  // namespace verity::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  verity::fuzz::Run(data, size);
  return 0;
}
