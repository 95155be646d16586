// Implements LogState's record body: a header of "key value" lines, a
// blank line, then the checkpoint's signed note.

#include "lib/tlog/log_state.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/status_macros.h"

namespace verity::tlog {
namespace {

constexpr absl::string_view kMagic = "verityd log state v1\n";

}  // namespace

std::string LogState::Encode() const {
  return absl::StrCat(kMagic, "size ", size, "\nbatch ",
                      batch.empty() ? "-" : batch, "\nbatch-from ", batch_from,
                      "\nbatch-from-root ", LogHashToBase64(batch_from_root),
                      "\n\n", checkpoint);
}

absl::StatusOr<LogState> LogState::Decode(absl::string_view body) {
  const auto malformed = [] {
    return absl::InvalidArgumentError("the log's state record is malformed");
  };
  if (!absl::ConsumePrefix(&body, kMagic)) return malformed();
  const size_t end = body.find("\n\n");
  if (end == absl::string_view::npos) return malformed();
  LogState state;
  state.checkpoint = std::string(body.substr(end + 2));
  const std::vector<absl::string_view> lines =
      absl::StrSplit(body.substr(0, end), '\n');
  if (lines.size() != 4) return malformed();
  absl::string_view value;
  const auto field = [&value](absl::string_view line, absl::string_view key) {
    value = line;
    return absl::ConsumePrefix(&value, key) && absl::ConsumePrefix(&value, " ");
  };
  if (!field(lines[0], "size") || !absl::SimpleAtoi(value, &state.size)) {
    return malformed();
  }
  if (!field(lines[1], "batch") || value.empty()) return malformed();
  if (value != "-") state.batch = std::string(value);
  if (!field(lines[2], "batch-from") ||
      !absl::SimpleAtoi(value, &state.batch_from) ||
      state.batch_from > state.size) {
    return malformed();
  }
  if (!field(lines[3], "batch-from-root")) return malformed();
  ASSIGN_OR_RETURN(state.batch_from_root, LogHashFromBase64(value));
  return state;
}

}  // namespace verity::tlog
