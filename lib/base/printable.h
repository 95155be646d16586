// Text from elsewhere (a server's message, a manifest's path, a name) made
// safe to print on one line of a log, a status file or a terminal: control
// characters, C1 controls and bytes that are not UTF-8 escaped as C escapes
// (\n, \x1b, \xff), a backslash doubled; UTF-8 text stays as it is.

#ifndef VERITYD_LIB_BASE_PRINTABLE_H_
#define VERITYD_LIB_BASE_PRINTABLE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace verity {

std::string Printable(absl::string_view text);

}  // namespace verity

#endif  // VERITYD_LIB_BASE_PRINTABLE_H_
