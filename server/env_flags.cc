// Implements the VERITYD_* environment fallback for flags.

#include "server/env_flags.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace verity::server {

std::string EnvVarForFlag(absl::string_view prefix, absl::string_view flag) {
  return absl::StrCat(prefix, absl::AsciiStrToUpper(flag));
}

std::vector<std::string> ArgvWithEnvironment(
    int argc, char** argv, absl::string_view prefix,
    const std::vector<std::string>& flags) {
  std::vector<std::string> args;
  if (argc > 0) args.emplace_back(argv[0]);
  for (const std::string& flag : flags) {
    const char* value = std::getenv(EnvVarForFlag(prefix, flag).c_str());
    if (value != nullptr) args.push_back(absl::StrCat("--", flag, "=", value));
  }
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return args;
}

}  // namespace verity::server
