// Implements Checkpoint's text form.

#include "lib/tlog/checkpoint.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"

namespace verity::tlog {
namespace {

bool ValidSize(absl::string_view text, uint64_t& size) {
  return !text.empty() && text.size() <= 20 &&
         std::all_of(text.begin(), text.end(), absl::ascii_isdigit) &&
         (text == "0" || text[0] != '0') && absl::SimpleAtoi(text, &size);
}

}  // namespace

std::string Checkpoint::ToText() const {
  std::string text =
      absl::StrCat(origin, "\n", size, "\n", LogHashToBase64(root), "\n");
  for (const std::string& line : extensions) absl::StrAppend(&text, line, "\n");
  return text;
}

absl::StatusOr<Checkpoint> Checkpoint::Parse(absl::string_view text) {
  const auto malformed = [&text](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a checkpoint (", why, "): \"",
                     Printable(text.substr(0, 200)), "\""));
  };
  if (!absl::ConsumeSuffix(&text, "\n")) return malformed("no final newline");
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.size() < 3) return malformed("fewer than three lines");
  Checkpoint checkpoint;
  for (absl::string_view line : lines) {
    if (line.empty()) return malformed("an empty line");
  }
  checkpoint.origin = std::string(lines[0]);
  if (!ValidSize(lines[1], checkpoint.size)) return malformed("the size");
  absl::StatusOr<LogHash> root = LogHashFromBase64(lines[2]);
  if (!root.ok()) return malformed("the root hash");
  checkpoint.root = *root;
  for (size_t i = 3; i < lines.size(); ++i) {
    checkpoint.extensions.emplace_back(lines[i]);
  }
  return checkpoint;
}

}  // namespace verity::tlog
