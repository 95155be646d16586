// `verity witness`: a transparency-log witness (client/witness/witness.h)
// serving C2SP tlog-witness over HTTP until SIGTERM, SIGINT or SIGHUP.

#ifndef VERITYD_CLIENT_CLI_WITNESS_COMMAND_H_
#define VERITYD_CLIENT_CLI_WITNESS_COMMAND_H_

#include <cstdio>

namespace verity::cli {

// Runs `verity witness --log-key=FILE --witness-key=PEM --witness-name=NAME`
// (argv[0] is "witness"). Returns the exit code.
int RunWitnessCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_WITNESS_COMMAND_H_
