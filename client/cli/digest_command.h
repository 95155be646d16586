// `verity digest`: the fs-verity digest of local files, output line for line as
// `fsverity digest` prints it, with the same options, plus --threads; or with
// --format=dm-verity their dm-verity root hash as `veritysetup format` prints
// it (dm_verity_digest.h).

#ifndef VERITYD_CLIENT_CLI_DIGEST_COMMAND_H_
#define VERITYD_CLIENT_CLI_DIGEST_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/cli/dm_verity_digest.h"
#include "lib/tree/merkle_params.h"

namespace verity::cli {

// The parsed command line of `verity digest`.
struct DigestOptions {
  MerkleParams params;  // --hash-alg, --block-size, --salt
  // --out-merkle-tree / --out-descriptor, with several FILEs, behave as in
  // fsverity: both are truncated once; each file's tree is then written at
  // offset 0 over the last one, while the descriptors are appended one after
  // another.
  std::string out_merkle_tree;
  std::string out_descriptor;
  bool compact = false;  // --compact: print only the hex digest
  bool for_builtin_sig =
      false;        // --for-builtin-sig: print the kernel's signed-digest form
  int threads = 0;  // --threads: hashing threads per file; 0 = one per CPU
  // --format=dm-verity, and its options.
  bool dm_verity_format = false;
  bool salt_none = false;  // --salt=-: none, for dm-verity
  DmVerityDigestOptions dm_verity;
  std::vector<std::string> files;
};

// Parses `argv` (argv[0] is "digest"); INVALID_ARGUMENT naming the bad option.
absl::StatusOr<DigestOptions> ParseDigestOptions(int argc, char** argv);

// Runs `verity digest` and returns its exit code; results go to `out`, errors
// to `err`.
int RunDigestCommand(int argc, char** argv, std::FILE* out, std::FILE* err);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_DIGEST_COMMAND_H_
