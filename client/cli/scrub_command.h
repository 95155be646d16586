// `verity scrub [--wait]`: a scrub pass over the server's whole store.

#ifndef VERITYD_CLIENT_CLI_SCRUB_COMMAND_H_
#define VERITYD_CLIENT_CLI_SCRUB_COMMAND_H_

#include <cstdio>
#include <string>

#include "verity/blob_info.h"

namespace verity::cli {

// What `verity scrub` prints. Waited for: "checked N blobs (B bytes): K bad
// blocks, R repaired, U blobs unrepairable, E unread; took D"; then, or
// alone, "a pass is running since T" or "no pass is running", and "last
// complete pass: T" ("none").
std::string FormatScrubResult(const sdk::ScrubResult& result);

// Runs `verity scrub` (argv[0] is "scrub"); returns the exit code.
int RunScrubCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_SCRUB_COMMAND_H_
