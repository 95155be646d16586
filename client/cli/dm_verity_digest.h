// `verity digest --format=dm-verity`: the dm-verity root hash of local files,
// printed as `veritysetup format` prints it, and optionally the hash device it
// writes (with or without the superblock), byte for byte.

#ifndef VERITYD_CLIENT_CLI_DM_VERITY_DIGEST_H_
#define VERITYD_CLIENT_CLI_DM_VERITY_DIGEST_H_

#include <cstdio>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lib/tree/dm_verity.h"

namespace verity::cli {

struct DmVerityDigestOptions {
  // --hash-alg, --data-block-size, --hash-block-size, --format-version and
  // --salt (HEX, or - for none).
  DmVerityParams params;
  // No --salt: a random 32-byte salt per file, as veritysetup makes one.
  bool random_salt = true;
  // --out-hash-tree: the hash device (with several FILEs, the last one's).
  std::string out_hash_tree;
  // --no-superblock clears it.
  bool superblock = true;
  // --uuid, for the superblock; a random one if unset.
  std::optional<Uuid> uuid;
  // --fec-device: the FEC area over the data and hash blocks (with several
  // FILEs, the last one's), with --fec-roots roots (veritysetup's default).
  std::string fec_device;
  int fec_roots = 2;
};

// Hashes `file`, prints veritysetup's lines for it to `out` and writes the
// hash device and the FEC device if asked (in the same pass over the file).
absl::Status DmVerityDigestFile(const std::string& file,
                                const DmVerityDigestOptions& options,
                                std::FILE* out);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_DM_VERITY_DIGEST_H_
