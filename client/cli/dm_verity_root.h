// The dm-verity trust anchor a user gives `verity get`, `stat` and `put`: the
// root hash `veritysetup format` printed, and its parameters either from the
// hash device's superblock or spelled out.

#ifndef VERITYD_CLIENT_CLI_DM_VERITY_ROOT_H_
#define VERITYD_CLIENT_CLI_DM_VERITY_ROOT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/cli/command_line.h"
#include "verity/digest.h"

namespace verity::cli {

// As given on the command line. Plain value.
struct DmVerityRootFlags {
  std::string root_hash;    // --root-hash=HEX
  std::string hash_device;  // --hash-device=FILE: a superblock at its start
  std::string params;       // --verity-params=KEY=VALUE,...
  // --data-blocks=N or --data-size=BYTES: the image's size, as the caller
  // knows it. A hash device's superblock says it too, but is not trusted
  // alone: a superblock that claims the blocks of one hash level makes that
  // level's hash blocks an "image" with the same root hash.
  std::optional<uint64_t> data_blocks;
  std::optional<uint64_t> data_size;
  // --root-hash-signature=FILE (systemd's roothash.p7s) and
  // --root-hash-cert=PEM: the root hash is used only if the signature
  // verifies with one of the pinned certificates.
  std::string signature;
  std::string cert;
  bool given() const {
    return !root_hash.empty() || !hash_device.empty() || !params.empty() ||
           !signature.empty() || !cert.empty() || data_blocks.has_value() ||
           data_size.has_value();
  }
};

std::vector<CommandFlag> DmVerityRootFlagList(DmVerityRootFlags* flags);

// The usage text of those flags.
extern const char kDmVerityRootUsage[];

// The anchor the flags give. The image's size must come from the caller:
// `image_size` (the size of a local image, for verity put), --data-size,
// --data-blocks or --verity-params' data-blocks; each one given must agree,
// and with the hash device's superblock; a hash device that is a regular
// file must be exactly as large as the superblock and the levels of that
// many blocks. INVALID_ARGUMENT for a missing, malformed or disagreeing flag, a
// size not of whole blocks, an unreadable or superblock-less hash device;
// DATA_LOSS for a root hash signature that does not verify.
absl::StatusOr<sdk::DmVerityRoot> ResolveDmVerityRoot(
    const DmVerityRootFlags& flags,
    std::optional<uint64_t> image_size = std::nullopt);

// Parses --verity-params: veritysetup's option names, comma-separated:
// hash=sha256|sha512, data-block-size=N, hash-block-size=N, block-size=N
// (both), data-blocks=N, salt=HEX|- and format=1. Unset fields keep their
// value in `root`.
absl::Status ParseVerityParams(absl::string_view text, sdk::DmVerityRoot* root);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_DM_VERITY_ROOT_H_
