// `verity history NAME`: the versions the server keeps of a name, newest
// first.

#ifndef VERITYD_CLIENT_CLI_HISTORY_COMMAND_H_
#define VERITYD_CLIENT_CLI_HISTORY_COMMAND_H_

#include <cstdio>
#include <string>

#include "verity/blob_info.h"

namespace verity::cli {

// What `verity history` knows of a version's blob now.
enum class VersionBlob { kFile, kTree, kGone };

// One line of `verity history`, fields separated by single spaces:
// "INDEX DIGEST KIND written=TIME" (KIND tree, file or gone: the blob is no
// longer stored; TIME RFC 3339 UTC, or "-" if the server does not know),
// then for a signed version "version=N issued=TIME signers=ID[,ID...]
// verified=yes|no", else "unsigned".
std::string FormatHistoryLine(size_t index, const sdk::NameVersionInfo& version,
                              VersionBlob blob);

// Runs `verity history NAME` (argv[0] is "history"); returns the exit code.
int RunHistoryCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_HISTORY_COMMAND_H_
