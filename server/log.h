// verityd's log: one line per event on stderr, where container runtimes collect
// it. (Debian's Abseil predates absl/log, and one function is all the server
// needs.)

#ifndef VERITYD_SERVER_LOG_H_
#define VERITYD_SERVER_LOG_H_

#include "absl/strings/string_view.h"

namespace verity::server {

// Writes "<RFC 3339 UTC time> verityd: <message>\n" with a single write(2), so
// lines from concurrent threads never interleave. Thread-safe.
void Log(absl::string_view message);

}  // namespace verity::server

#endif  // VERITYD_SERVER_LOG_H_
