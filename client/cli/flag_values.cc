// Implements the shared option-value parsers on Abseil's strict number
// parsing: no signs, spaces or trailing junk are accepted.

#include "client/cli/flag_values.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/base/status_macros.h"

namespace verity::cli {
namespace {

// True if `text` is non-empty and made only of `chars`.
bool AllOf(absl::string_view text, absl::string_view chars) {
  return !text.empty() &&
         text.find_first_not_of(chars) == absl::string_view::npos;
}

}  // namespace

absl::StatusOr<std::string> ParseHexFlag(absl::string_view what,
                                         absl::string_view hex) {
  if (hex.size() % 2 != 0 || !std::all_of(hex.begin(), hex.end(), [](char c) {
        return absl::ascii_isxdigit(c);
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not a valid hex string: '", hex, "'"));
  }
  return absl::HexStringToBytes(hex);
}

absl::StatusOr<uint32_t> ParseBlockSizeFlag(absl::string_view text) {
  uint32_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value == 0 ||
      (value & (value - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid block size '", text, "': must be a power of 2"));
  }
  return value;
}

absl::StatusOr<uint64_t> ParseUint64Flag(absl::string_view flag,
                                         absl::string_view text) {
  uint64_t value = 0;
  // SimpleAtoi also takes signs and surrounding spaces; a byte count has
  // neither.
  if (!AllOf(text, "0123456789") || !absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid ", flag, " '", text, "': must be a non-negative integer"));
  }
  return value;
}

absl::StatusOr<absl::Duration> ParseSecondsFlag(absl::string_view flag,
                                                absl::string_view text) {
  double seconds = 0;
  if (!AllOf(text, "0123456789.") || !absl::SimpleAtod(text, &seconds) ||
      !std::isfinite(seconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid ", flag, " '", text, "': must be a number of seconds"));
  }
  return absl::Seconds(seconds);
}

absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view flag,
                                                 absl::string_view text) {
  absl::Duration duration;
  absl::string_view days = text;
  bool ok = false;
  if (absl::ConsumeSuffix(&days, "d")) {
    uint32_t count = 0;
    ok = AllOf(days, "0123456789") && absl::SimpleAtoi(days, &count);
    duration = absl::Hours(24) * count;
  } else {
    ok = absl::ParseDuration(text, &duration);
  }
  if (!ok || duration <= absl::ZeroDuration() ||
      duration == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", flag, " '", text,
                     "': must be a positive duration such as 720h or 30d"));
  }
  return duration;
}

bool AsksForHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") return false;
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

absl::StatusOr<int> ParseParallelFlag(absl::string_view text) {
  ASSIGN_OR_RETURN(const uint64_t n, ParseUint64Flag("--parallel", text));
  if (n < 1 || n > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid --parallel '", text, "': must be from 1 to 64"));
  }
  return static_cast<int>(n);
}

int MachineThreads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace verity::cli
