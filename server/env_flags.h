// Lets every flag of a binary also be set by an environment variable, the way
// containers are configured: --store_dir from VERITYD_STORE_DIR, and so on.
// Flags on the command line win.

#ifndef VERITYD_SERVER_ENV_FLAGS_H_
#define VERITYD_SERVER_ENV_FLAGS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace verity::server {

// The environment variable for a flag: prefix + the flag's name in upper case.
std::string EnvVarForFlag(absl::string_view prefix, absl::string_view flag);

// argv with "--flag=value" inserted after argv[0] for each flag in `flags`
// whose variable is set, so that a later occurrence on the command line
// overrides it (absl keeps the last).
std::vector<std::string> ArgvWithEnvironment(
    int argc, char** argv, absl::string_view prefix,
    const std::vector<std::string>& flags);

}  // namespace verity::server

#endif  // VERITYD_SERVER_ENV_FLAGS_H_
