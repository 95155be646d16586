// `verity gc [--dry-run]`: one garbage collection on the server, now; and
// `verity du`: what the store holds, reaches and would free (a dry run).

#ifndef VERITYD_CLIENT_CLI_GC_COMMAND_H_
#define VERITYD_CLIENT_CLI_GC_COMMAND_H_

#include <cstdio>
#include <string>

#include "verity/blob_info.h"

namespace verity::cli {

// The line `verity gc` prints: "freed N blobs (B bytes) of M stored (B
// bytes): R reachable from K names (T trees), Y unreachable kept within the
// grace; F of Q quarantined freed; took D" ("would free", "would be freed"
// for a dry run).
std::string FormatCollectResult(const sdk::CollectResult& result, bool dry_run);

// What `verity du` prints: "stored: N blobs, B bytes", "reachable: N blobs, B
// bytes, from K names (T trees)", "gc would free: N blobs, B bytes (Y more
// unreachable, kept within the grace)" and "quarantined: Q blobs, F of them
// gc would free", a line each.
std::string FormatUsage(const sdk::CollectResult& result);

// Run `verity gc` and `verity du` (argv[0] is "gc", "du"); return the exit
// code.
int RunGcCommand(int argc, char** argv, std::FILE* out, std::FILE* err);
int RunDuCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_GC_COMMAND_H_
