// What `verity sync` says after each attempt, in its status file, and what
// `verity sync --probe` reads back from it.

#ifndef VERITYD_CLIENT_SYNC_SYNC_STATUS_H_
#define VERITYD_CLIENT_SYNC_SYNC_STATUS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace verity::sync {

// The status file's name in the synced folder, unless --status-file says
// elsewhere.
inline constexpr char kStatusFile[] = "..verity-sync.status";

// What the status file says. Plain value.
struct SyncState {
  std::string digest;  // in place; empty before the first switch
  uint64_t version = 0;
  absl::Time last_success = absl::InfinitePast();
  absl::Time last_attempt = absl::InfinitePast();
  std::string last_error;  // of the last attempt; empty if it succeeded
  uint64_t switches = 0;
};

// The status file's lines: "state: ok|failing|starting", "digest: ...",
// "version: N", "last_success: TIME", "last_attempt: TIME" (RFC 3339, or
// "never"), "last_error: ..." (escaped: one line, nothing a terminal acts
// on), "switches: N".
std::string StatusText(const SyncState& state);

// --probe: OK if `text` (a status file's) shows a version in place and, with
// a finite `max_age`, a successful attempt within it of `now`; UNAVAILABLE
// saying which is missing otherwise.
absl::Status CheckReady(absl::string_view text, absl::Duration max_age,
                        absl::Time now);

}  // namespace verity::sync

#endif  // VERITYD_CLIENT_SYNC_SYNC_STATUS_H_
