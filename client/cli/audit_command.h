// `verity audit`: a publisher's monitor of a server's transparency log
// (client/names/log_audit.h), naming every statement its key signed that
// its own journal does not hold.

#ifndef VERITYD_CLIENT_CLI_AUDIT_COMMAND_H_
#define VERITYD_CLIENT_CLI_AUDIT_COMMAND_H_

#include <cstdio>

namespace verity::cli {

// Runs `verity audit --log-key=FILE --key=PUB` (argv[0] is "audit").
// Returns the exit code: 3 when a statement is unknown or the log is not
// consistent.
int RunAuditCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_AUDIT_COMMAND_H_
