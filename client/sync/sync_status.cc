#include "client/sync/sync_status.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/printable.h"

namespace verity::sync {
namespace {

std::string TimeText(absl::Time time) {
  if (time == absl::InfinitePast()) return "never";
  return Rfc3339(time);
}

}  // namespace

std::string StatusText(const SyncState& state) {
  const char* word = !state.last_error.empty() ? "failing"
                     : state.digest.empty()    ? "starting"
                                               : "ok";
  return absl::StrCat("state: ", word, "\ndigest: ", state.digest,
                      "\nversion: ", state.version,
                      "\nlast_success: ", TimeText(state.last_success),
                      "\nlast_attempt: ", TimeText(state.last_attempt),
                      "\nlast_error: ", Printable(state.last_error),
                      "\nswitches: ", state.switches, "\n");
}

absl::Status CheckReady(absl::string_view text, absl::Duration max_age,
                        absl::Time now) {
  std::string digest, last_success;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "digest: ")) digest = std::string(line);
    if (absl::ConsumePrefix(&line, "last_success: ")) {
      last_success = std::string(line);
    }
  }
  if (digest.empty()) {
    return absl::UnavailableError("no version in place yet");
  }
  if (max_age == absl::InfiniteDuration()) return absl::OkStatus();
  absl::Time when;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_sec, last_success, &when, &error) ||
      now - when > max_age) {
    return absl::UnavailableError(absl::StrCat("no successful attempt within ",
                                               absl::FormatDuration(max_age),
                                               " (last: ", last_success, ")"));
  }
  return absl::OkStatus();
}

}  // namespace verity::sync
