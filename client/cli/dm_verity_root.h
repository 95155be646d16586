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
  // --root-hash-signature=FILE (systemd's roothash.p7s) and
  // --root-hash-cert=PEM: the root hash is used only if the signature
  // verifies with one of the pinned certificates.
  std::string signature;
  std::string cert;
  bool given() const {
    return !root_hash.empty() || !hash_device.empty() || !params.empty() ||
           !signature.empty() || !cert.empty();
  }
};

std::vector<CommandFlag> DmVerityRootFlagList(DmVerityRootFlags* flags);

// The usage text of those flags.
extern const char kDmVerityRootUsage[];

// The anchor the flags give. `data_size`, if set, is the size of a local
// image (verity put): --verity-params may then leave data-blocks out, and a
// superblock or data-blocks that disagree, or a size not of whole blocks, are
// refused. INVALID_ARGUMENT for a missing or malformed flag, an unreadable or
// superblock-less hash device; DATA_LOSS for a root hash signature that does
// not verify.
absl::StatusOr<sdk::DmVerityRoot> ResolveDmVerityRoot(
    const DmVerityRootFlags& flags,
    std::optional<uint64_t> data_size = std::nullopt);

// Parses --verity-params: veritysetup's option names, comma-separated:
// hash=sha256|sha512, data-block-size=N, hash-block-size=N, block-size=N
// (both), data-blocks=N, salt=HEX|- and format=1. Unset fields keep their
// value in `root`.
absl::Status ParseVerityParams(absl::string_view text, sdk::DmVerityRoot* root);

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_DM_VERITY_ROOT_H_
