// Reads the root hash and the parameters: a superblock through lib's parser,
// --verity-params key by key.

#include "client/cli/dm_verity_root.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli/flag_values.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/tree/dm_verity.h"

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

// Reads the parameters of `root` from the superblock at `path`; returns the
// data blocks it claims, which the caller must confirm.
absl::StatusOr<uint64_t> ReadSuperblock(const std::string& path,
                                        sdk::DmVerityRoot* root) {
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
  return superblock->data_blocks;
}

// The data blocks the caller gives: `image_size`, --data-size, --data-blocks
// and --verity-params' data-blocks (`params_blocks`, 0 if not given), which
// must agree; 0 if none is given.
absl::StatusOr<uint64_t> CallersDataBlocks(const DmVerityRootFlags& flags,
                                           std::optional<uint64_t> image_size,
                                           uint32_t block_size,
                                           uint64_t params_blocks) {
  std::vector<std::pair<std::string, uint64_t>> given;
  if (params_blocks != 0) given.emplace_back("data-blocks", params_blocks);
  if (flags.data_blocks.has_value()) {
    given.emplace_back("--data-blocks", *flags.data_blocks);
  }
  const auto add_size = [&](const char* what, uint64_t bytes) -> absl::Status {
    if (bytes % block_size != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is ", bytes, " bytes, not whole blocks of ",
                       block_size, ": dm-verity covers whole blocks only"));
    }
    given.emplace_back(absl::StrCat(what, " (", bytes, " bytes)"),
                       bytes / block_size);
    return absl::OkStatus();
  };
  if (flags.data_size.has_value()) {
    RETURN_IF_ERROR(add_size("--data-size", *flags.data_size));
  }
  if (image_size.has_value())
    RETURN_IF_ERROR(add_size("the image", *image_size));
  for (const auto& [what, blocks] : given) {
    if (blocks != given.front().second) {
      return absl::InvalidArgumentError(
          absl::StrCat(given.front().first, " gives ", given.front().second,
                       " data blocks but ", what, " gives ", blocks));
    }
  }
  return given.empty() ? 0 : given.front().second;
}

// A hash device that is a regular file holds the superblock, padded to a
// hash block, and the levels of `root`: any other size is a tree for
// another number of blocks.
absl::Status CheckHashDeviceSize(const std::string& path,
                                 const sdk::DmVerityRoot& root) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return absl::ErrnoToStatus(errno, path);
  if (!S_ISREG(st.st_mode)) return absl::OkStatus();
  DmVerityParams params;
  params.algorithm = static_cast<HashAlgorithm>(root.hash_algorithm);
  params.data_block_size = root.data_block_size;
  params.hash_block_size = root.hash_block_size;
  params.salt = root.salt;
  ASSIGN_OR_RETURN(const DmVerityLayout layout,
                   MakeDmVerityLayout(params, root.data_blocks));
  const uint64_t want =
      uint64_t{root.hash_block_size} * (1 + layout.hash_blocks());
  if (static_cast<uint64_t>(st.st_size) == want) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(path, " is ", st.st_size, " bytes, but the hash device of ",
                   root.data_blocks, " data blocks (",
                   layout.level_blocks.size(), " levels) is ", want, " bytes"));
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
    "salt=- for none). The image's size comes from the caller, never from the\n"
    "superblock alone: --data-blocks=N (veritysetup's \"Data blocks\") or\n"
    "--data-size=BYTES, or data-blocks in --verity-params, or the image that\n"
    "put reads. The blob is then read by the digest they and the root hash\n"
    "give, and every byte is proved against the root hash.\n"
    "--root-hash-signature=FILE --root-hash-cert=PEM: the root hash is used\n"
    "only if FILE (systemd's roothash.p7s: PKCS#7 over the hex root hash)\n"
    "verifies with a certificate in PEM; a refusal exits 3.\n";

std::vector<CommandFlag> DmVerityRootFlagList(DmVerityRootFlags* flags) {
  const auto count = [](const char* name, std::optional<uint64_t>* field) {
    return CommandFlag{
        name, 0, true, [name, field](absl::string_view v) -> absl::Status {
          ASSIGN_OR_RETURN(*field,
                           ParseUint64Flag(absl::StrCat("--", name), v));
          return absl::OkStatus();
        }};
  };
  return {StringFlag("root-hash", &flags->root_hash),
          StringFlag("hash-device", &flags->hash_device),
          StringFlag("verity-params", &flags->params),
          StringFlag("root-hash-signature", &flags->signature),
          StringFlag("root-hash-cert", &flags->cert),
          count("data-blocks", &flags->data_blocks),
          count("data-size", &flags->data_size)};
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
    const DmVerityRootFlags& flags, std::optional<uint64_t> image_size) {
  if (flags.root_hash.empty()) {
    return absl::InvalidArgumentError(
        "--hash-device and --verity-params need --root-hash");
  }
  if (flags.hash_device.empty() == flags.params.empty()) {
    return absl::InvalidArgumentError(
        "--root-hash needs exactly one of --hash-device and --verity-params");
  }
  if (flags.data_blocks.has_value() && flags.data_size.has_value()) {
    return absl::InvalidArgumentError(
        "give one of --data-blocks and --data-size");
  }
  sdk::DmVerityRoot root;
  ASSIGN_OR_RETURN(root.root_hash, ParseHexFlag("root-hash", flags.root_hash));
  RETURN_IF_ERROR(CheckSignature(flags, root));
  std::optional<uint64_t> claimed;
  if (!flags.hash_device.empty()) {
    ASSIGN_OR_RETURN(claimed, ReadSuperblock(flags.hash_device, &root));
  } else {
    RETURN_IF_ERROR(ParseVerityParams(flags.params, &root));
  }
  ASSIGN_OR_RETURN(root.data_blocks,
                   CallersDataBlocks(flags, image_size, root.data_block_size,
                                     root.data_blocks));
  if (root.data_blocks == 0) {
    return absl::InvalidArgumentError(
        flags.hash_device.empty()
            ? "--verity-params needs data-blocks=N (veritysetup's \"Data "
              "blocks\"), or give --data-blocks or --data-size"
            : "the image's size must be given (--data-blocks=N, veritysetup's "
              "\"Data blocks\", or --data-size=BYTES): a hash device's "
              "superblock is not trusted alone for it");
  }
  if (claimed.has_value()) {
    if (*claimed != root.data_blocks) {
      return absl::InvalidArgumentError(
          absl::StrCat(flags.hash_device, ": the superblock says ", *claimed,
                       " data blocks, but the image is ", root.data_blocks));
    }
    RETURN_IF_ERROR(CheckHashDeviceSize(flags.hash_device, root));
  }
  return root;
}

}  // namespace verity::cli
