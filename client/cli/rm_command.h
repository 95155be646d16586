// `verity rm`: deletes a blob by digest, or only a name by name.

#ifndef VERITYD_CLIENT_CLI_RM_COMMAND_H_
#define VERITYD_CLIENT_CLI_RM_COMMAND_H_

#include <cstdio>

namespace verity::cli {

// Runs `verity rm DIGEST_OR_NAME` (argv[0] is "rm"); returns the exit code.
// A name is removed on its own; the blob stays while other names or readers
// use it.
int RunRmCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_RM_COMMAND_H_
