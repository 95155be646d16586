// Text from elsewhere (a server's message, a manifest's path, a name) made
// safe to print on one line of a log, a status file or a terminal: control
// characters, C1 controls and bytes that are not UTF-8 escaped as C escapes
// (\n, \x1b, \xff), a backslash doubled; UTF-8 text stays as it is.

#ifndef VERITYD_LIB_BASE_PRINTABLE_H_
#define VERITYD_LIB_BASE_PRINTABLE_H_

#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace verity {

std::string Printable(absl::string_view text);

// Whether `text` is well-formed UTF-8: whole sequences in shortest form, no
// surrogates, nothing above U+10FFFF (controls are UTF-8 too).
bool IsUtf8(absl::string_view text);

// Writes "PREFIX: LINE\n" to `out` in one write, LINE made Printable, and
// flushes it: a command's log line, whole even among other threads' lines.
// PREFIX is the program's own text ("verity mount"), written as it is.
void PrintLine(std::FILE* out, absl::string_view prefix,
               absl::string_view line);

// `time` as logs and status files print it: RFC 3339 in UTC, whole seconds
// ("2026-12-04T10:50:33Z"), which absl::RFC3339_sec parses back.
std::string Rfc3339(absl::Time time);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_PRINTABLE_H_
