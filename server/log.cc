// Implements Log.

#include "server/log.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace verity::server {

void Log(absl::string_view message) {
  const std::string line =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                    absl::UTCTimeZone()),
                   " verityd: ", message, "\n");
  // Best effort: there is nowhere to report a failed write to stderr.
  [[maybe_unused]] ssize_t n = write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace verity::server
