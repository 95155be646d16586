// The `verity` command line: one binary, one subcommand per job.

#include <cstdio>
#include <cstring>

#include "client/digest_command.h"
#include "client/exit_codes.h"

namespace {

constexpr char kUsage[] =
    "Usage: verity COMMAND [ARGS...]\n"
    "\n"
    "Commands:\n"
    "  digest FILE...   print the fs-verity digest of files (as `fsverity "
    "digest` does)\n"
    "\n"
    "Exit codes: 0 ok, 1 usage, 2 not found, 3 verification failed, 4 "
    "unavailable,\n"
    "            5 any other error.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return verity::cli::kExitUsage;
  }
  const char* command = argv[1];
  if (std::strcmp(command, "digest") == 0) {
    return verity::cli::RunDigestCommand(argc - 1, argv + 1, stdout, stderr);
  }
  if (std::strcmp(command, "help") == 0 ||
      std::strcmp(command, "--help") == 0) {
    std::fputs(kUsage, stdout);
    return verity::cli::kExitOk;
  }
  std::fprintf(stderr, "verity: unknown command '%s'\n%s", command, kUsage);
  return verity::cli::kExitUsage;
}
