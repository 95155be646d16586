// `verity stat`: what the server knows about one blob, checked for
// consistency with its digest.

#ifndef VERITYD_CLIENT_CLI_STAT_COMMAND_H_
#define VERITYD_CLIENT_CLI_STAT_COMMAND_H_

#include <cstdio>
#include <string>

#include "verity/blob_info.h"

namespace verity::cli {

// The lines `verity stat` prints: digest, size, hash algorithm, block size,
// salt (hex), tree size, then one line per name.
std::string FormatStat(const sdk::BlobInfo& info);

// Runs `verity stat DIGEST_OR_NAME` (argv[0] is "stat"); returns the exit
// code.
int RunStatCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_STAT_COMMAND_H_
