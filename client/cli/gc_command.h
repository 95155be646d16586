// `verity gc [--dry-run]`: one garbage collection on the server, now.

#ifndef VERITYD_CLIENT_CLI_GC_COMMAND_H_
#define VERITYD_CLIENT_CLI_GC_COMMAND_H_

#include <cstdio>
#include <string>

#include "verity/blob_info.h"

namespace verity::cli {

// The line `verity gc` prints: "freed N blobs (B bytes) of M stored (B
// bytes): R reachable from K names (T trees), Y unreachable kept within the
// grace; took D" ("would free" for a dry run).
std::string FormatCollectResult(const sdk::CollectResult& result, bool dry_run);

// Runs `verity gc` (argv[0] is "gc"); returns the exit code.
int RunGcCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_GC_COMMAND_H_
