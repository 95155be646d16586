// `verity ls`: every blob the server stores, one line each.

#ifndef VERITYD_CLIENT_CLI_LS_COMMAND_H_
#define VERITYD_CLIENT_CLI_LS_COMMAND_H_

#include <cstdio>
#include <string>

#include "verity/blob_info.h"

namespace verity::cli {

// "DIGEST SIZE[ NAME...]\n", fields separated by single spaces.
std::string FormatListLine(const sdk::BlobInfo& info);

// Runs `verity ls` (argv[0] is "ls"), paging through List; returns the exit
// code. Lines are printed page by page, each entry checked first.
int RunLsCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_LS_COMMAND_H_
