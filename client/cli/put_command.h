// `verity put`: uploads files and prints their digests as `fsverity digest`
// does, once the server has confirmed them; a directory is stored as a tree
// (client/cli/tree_transfer.h) and printed with its manifest's digest.

#ifndef VERITYD_CLIENT_CLI_PUT_COMMAND_H_
#define VERITYD_CLIENT_CLI_PUT_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/cli/connection.h"
#include "client/cli/dm_verity_root.h"
#include "client/cli/name_signing.h"
#include "lib/tree/merkle_params.h"

namespace verity::cli {

// The parsed command line of `verity put`. Plain value.
struct PutOptions {
  client::ConnectionOptions connection;
  MerkleParams params;  // --hash-alg, --block-size, --salt, --format
  // --root-hash with --hash-device or --verity-params (one FILE): import a
  // `veritysetup format` image, stored only if it has that root hash.
  DmVerityRootFlags dm_verity;
  std::string name;  // --name, only with a single FILE
  // --sign-key (with --name), --version, --expires-in: the name's statement,
  // signed for the file's digest and stored with the name.
  SigningOptions signing;
  // --fsverity-sig: a detached signature by `fsverity sign` (only with one
  // FILE), stored with the blob.
  std::string fsverity_sig_file;
  // --parallel: a directory's files uploaded at a time.
  int parallel = 8;
  std::vector<std::string> files;  // files and directories
};

// Parses `argv` (argv[0] is "put"); INVALID_ARGUMENT naming the problem.
absl::StatusOr<PutOptions> ParsePutOptions(int argc, char** argv);

// Runs `verity put` and returns its exit code. Stops at the first file that
// fails; the lines of the files before it are printed.
int RunPutCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_PUT_COMMAND_H_
