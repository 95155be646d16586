// Reads the root hash and the parameters: a superblock through lib's parser,
// --verity-params key by key.

#include "client/cli/dm_verity_root.h"

#include <cerrno>
#include <cstdio>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli/flag_values.h"
#include "lib/dm_verity.h"
#include "lib/file_util.h"
#include "lib/status_macros.h"

namespace verity::cli {
namespace {

absl::Status ApplyParam(absl::string_view key, absl::string_view value,
                        sdk::DmVerityRoot* root) {
  if (key == "hash") {
    ASSIGN_OR_RETURN(const HashAlgorithm algorithm, ParseHashAlgorithm(value));
    root->hash_algorithm = static_cast<sdk::DigestAlgorithm>(algorithm);
  } else if (key == "data-block-size") {
    ASSIGN_OR_RETURN(root->data_block_size, ParseBlockSizeFlag(value));
  } else if (key == "hash-block-size") {
    ASSIGN_OR_RETURN(root->hash_block_size, ParseBlockSizeFlag(value));
  } else if (key == "block-size") {
    ASSIGN_OR_RETURN(root->data_block_size, ParseBlockSizeFlag(value));
    root->hash_block_size = root->data_block_size;
  } else if (key == "data-blocks") {
    ASSIGN_OR_RETURN(root->data_blocks, ParseUint64Flag("data-blocks", value));
  } else if (key == "salt") {
    if (value == "-") {
      root->salt.clear();
    } else {
      ASSIGN_OR_RETURN(root->salt, ParseHexFlag("salt", value));
    }
  } else if (key == "format") {
    if (value != "1") {
      return absl::InvalidArgumentError(absl::StrCat(
          "verityd stores dm-verity format 1 only, not format '", value, "'"));
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --verity-params key '", key, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadHead(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rbe");
  if (file == nullptr) return absl::ErrnoToStatus(errno, path);
  std::string head(kDmVeritySuperblockSize, '\0');
  head.resize(std::fread(head.data(), 1, head.size(), file));
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return head;
}

absl::Status ReadSuperblock(const std::string& path, sdk::DmVerityRoot* root) {
  ASSIGN_OR_RETURN(const std::string head, ReadHead(path));
  absl::StatusOr<DmVeritySuperblock> superblock =
      ParseDmVeritySuperblock(AsBytes(head));
  if (!superblock.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", superblock.status().message(),
                     " (made with --no-superblock? give --verity-params)"));
  }
  const DmVerityParams& params = superblock->params;
  if (params.format != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": verityd stores dm-verity format 1 only"));
  }
  root->hash_algorithm = static_cast<sdk::DigestAlgorithm>(params.algorithm);
  root->data_block_size = params.data_block_size;
  root->hash_block_size = params.hash_block_size;
  root->salt = params.salt;
  root->data_blocks = superblock->data_blocks;
  return absl::OkStatus();
}

// The signature files are small: roothash.p7s is a few KiB at most.
constexpr size_t kMaxTrustFileBytes = size_t{1} << 20;

absl::Status CheckSignature(const DmVerityRootFlags& flags,
                            const sdk::DmVerityRoot& root) {
  if (flags.signature.empty() != flags.cert.empty()) {
    return absl::InvalidArgumentError(
        "--root-hash-signature and --root-hash-cert go together");
  }
  if (flags.signature.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const std::string p7s,
                   ReadSmallFile(flags.signature, kMaxTrustFileBytes));
  ASSIGN_OR_RETURN(const std::string pem,
                   ReadSmallFile(flags.cert, kMaxTrustFileBytes));
  return sdk::VerifyRootHashSignature(root, p7s, pem);
}

}  // namespace

const char kDmVerityRootUsage[] =
    "dm-verity: --root-hash=HEX is the root hash `veritysetup format` "
    "printed;\n"
    "its parameters come from --hash-device=FILE (a hash device with its\n"
    "superblock) or --verity-params=hash=sha256,block-size=4096,"
    "data-blocks=N,salt=HEX\n"
    "(veritysetup's names; also data-block-size, hash-block-size, format=1,\n"
    "salt=- for none). The blob is then read by the digest they and the root\n"
    "hash give, and every byte is proved against the root hash.\n"
    "--root-hash-signature=FILE --root-hash-cert=PEM: the root hash is used\n"
    "only if FILE (systemd's roothash.p7s: PKCS#7 over the hex root hash)\n"
    "verifies with a certificate in PEM; a refusal exits 3.\n";

std::vector<CommandFlag> DmVerityRootFlagList(DmVerityRootFlags* flags) {
  const auto set = [](const char* name, std::string* field) {
    return CommandFlag{name, 0, true,
                       [name, field](absl::string_view v) -> absl::Status {
                         if (v.empty()) {
                           return absl::InvalidArgumentError(
                               absl::StrCat("--", name, " is empty"));
                         }
                         *field = std::string(v);
                         return absl::OkStatus();
                       }};
  };
  return {set("root-hash", &flags->root_hash),
          set("hash-device", &flags->hash_device),
          set("verity-params", &flags->params),
          set("root-hash-signature", &flags->signature),
          set("root-hash-cert", &flags->cert)};
}

absl::Status ParseVerityParams(absl::string_view text,
                               sdk::DmVerityRoot* root) {
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    const std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    RETURN_IF_ERROR(ApplyParam(kv.first, kv.second, root));
  }
  return absl::OkStatus();
}

absl::StatusOr<sdk::DmVerityRoot> ResolveDmVerityRoot(
    const DmVerityRootFlags& flags, std::optional<uint64_t> data_size) {
  if (flags.root_hash.empty()) {
    return absl::InvalidArgumentError(
        "--hash-device and --verity-params need --root-hash");
  }
  if (flags.hash_device.empty() == flags.params.empty()) {
    return absl::InvalidArgumentError(
        "--root-hash needs exactly one of --hash-device and --verity-params");
  }
  sdk::DmVerityRoot root;
  ASSIGN_OR_RETURN(root.root_hash, ParseHexFlag("root-hash", flags.root_hash));
  RETURN_IF_ERROR(CheckSignature(flags, root));
  if (!flags.hash_device.empty()) {
    RETURN_IF_ERROR(ReadSuperblock(flags.hash_device, &root));
  } else {
    RETURN_IF_ERROR(ParseVerityParams(flags.params, &root));
  }
  if (data_size.has_value()) {
    const uint64_t blocks = *data_size / root.data_block_size;
    if (*data_size % root.data_block_size != 0 ||
        (root.data_blocks != 0 && root.data_blocks != blocks)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the image is ", *data_size, " bytes; the parameters say ",
          root.data_blocks, " data blocks of ", root.data_block_size));
    }
    root.data_blocks = blocks;
  }
  if (root.data_blocks == 0) {
    return absl::InvalidArgumentError(
        "--verity-params needs data-blocks=N (veritysetup's \"Data blocks\")");
  }
  return root;
}

}  // namespace verity::cli
