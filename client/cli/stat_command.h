// `verity stat`: what the server knows about one blob, checked for
// consistency with its digest.

#ifndef VERITYD_CLIENT_CLI_STAT_COMMAND_H_
#define VERITYD_CLIENT_CLI_STAT_COMMAND_H_

#include <cstdio>
#include <string>

#include "verity/blob_info.h"

namespace verity::cli {

// The lines `verity stat` prints: digest, size, hash algorithm, block size,
// salt (hex), tree size, one line per name, then for a name with a signed
// statement its version, issue and expiry times (RFC 3339, UTC), one line
// per signer key id, and whether trusted keys verified it; and the size of
// the blob's fs-verity signature if it has one (stat does not verify it).
std::string FormatStat(const sdk::BlobInfo& info);

// Runs `verity stat DIGEST_OR_NAME` (argv[0] is "stat"); returns the exit
// code.
int RunStatCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_STAT_COMMAND_H_
