// Implements `verity put` on the SDK's PutFile, one RPC per file.

#include "client/cli/put_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "client/cli/tree_transfer.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/tree/file_digest.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

// The kernel's limit on a signature (FS_VERITY_MAX_SIGNATURE_SIZE); the
// server checks the signature's form.
constexpr size_t kMaxFsveritySignatureBytes = 16384;

constexpr char kUsage[] =
    "Usage: verity put FILE_OR_DIR... [--hash-alg=sha256|sha512] "
    "[--block-size=N] [--salt=HEX]\n"
    "                          [--format=fs-verity|dm-verity]\n"
    "                          [--name=NAME] [--fsverity-sig=SIG] (only with "
    "one FILE)\n"
    "                          [--parallel=N] (for a DIR)\n"
    "                          [--sign-key=FILE [--version=N]\n"
    "                           [--expires-in=DURATION]] (with --name)\n"
    "       verity put IMAGE --root-hash=HEX (--hash-device=FILE | "
    "--verity-params=...)\n"
    "                        [--root-hash-signature=FILE --root-hash-cert=PEM]"
    " [--name=NAME]\n"
    "--sign-key signs the statement \"NAME means the file's digest\" with the\n"
    "Ed25519 private key in FILE (PKCS#8 PEM) and stores it with the name, "
    "for\n"
    "clients with --trusted-keys; the file is hashed once more to sign "
    "first.\n"
    "A DIR is stored as a tree: the blobs of its files the server lacks\n"
    "(--parallel=N at a time, default 8, 1 to 64), then its manifest, whose\n"
    "digest names the whole tree (and which --name and --sign-key name and\n"
    "sign); symlinks must stay inside DIR, and devices, FIFOs and sockets\n"
    "are refused. `verity get NAME -o DIR` writes it back.\n"
    "--format=dm-verity stores a dm-verity tree (`veritysetup format` with "
    "equal\n"
    "block sizes; the file must be whole blocks) and prints roothash=HEX after "
    "the\n"
    "digest. --root-hash imports a `veritysetup format` image: its "
    "parameters\n"
    "come from the hash device's superblock or --verity-params, and the "
    "server\n"
    "stores it only if it has that root hash.\n";

std::vector<CommandFlag> PutFlags(PutOptions* opts) {
  std::vector<CommandFlag> flags = SigningFlags(&opts->signing, "sign-key");
  std::vector<CommandFlag> own = {
      {"format", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         if (v != "fs-verity" && v != "dm-verity") {
           return absl::InvalidArgumentError(absl::StrCat(
               "--format is fs-verity or dm-verity, not '", v, "'"));
         }
         opts->params.format =
             v == "dm-verity" ? TreeFormat::kDmVerity : TreeFormat::kFsVerity;
         return absl::OkStatus();
       }},
      {"hash-alg", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->params.hash_algorithm, ParseHashAlgorithm(v));
         return absl::OkStatus();
       }},
      {"block-size", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->params.block_size, ParseBlockSizeFlag(v));
         return absl::OkStatus();
       }},
      {"salt", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->params.salt, ParseHexFlag("salt", v));
         return absl::OkStatus();
       }},
      {"fsverity-sig", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         if (v.empty()) {
           return absl::InvalidArgumentError("--fsverity-sig is empty");
         }
         opts->fsverity_sig_file = std::string(v);
         return absl::OkStatus();
       }},
      {"name", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         if (v.empty()) return absl::InvalidArgumentError("--name is empty");
         opts->name = std::string(v);
         return absl::OkStatus();
       }},
      {"parallel", 0, true,
       [opts](absl::string_view v) -> absl::Status {
         ASSIGN_OR_RETURN(opts->parallel, ParseParallelFlag(v));
         return absl::OkStatus();
       }},
  };
  flags.insert(flags.end(), own.begin(), own.end());
  for (CommandFlag& flag : DmVerityRootFlagList(&opts->dm_verity)) {
    flags.push_back(std::move(flag));
  }
  return flags;
}

// With --sign-key: the statement for the file's digest, which is computed
// here (unless --root-hash gave it) and then sent as the expected digest.
absl::Status Sign(sdk::Client& client, const PutOptions& opts,
                  const std::string& file, sdk::PutOptions* put) {
  ParsedDigest digest;
  if (put->expected_digest.has_value()) {
    ASSIGN_OR_RETURN(digest, ParseDigest(put->expected_digest->ToString()));
  } else {
    ASSIGN_OR_RETURN(
        const MerkleTree tree,
        BuildMerkleTreeFromFile(file, opts.params, MachineThreads()));
    digest = ParsedDigest{opts.params.hash_algorithm, tree.digest};
  }
  ASSIGN_OR_RETURN(
      put->name_statement,
      SignName(opts.signing, opts.name, digest, NameKind::kFile, &client));
  ASSIGN_OR_RETURN(put->expected_digest, sdk::Digest::Parse(digest.ToString()));
  return absl::OkStatus();
}

// --root-hash: the tree parameters and the expected digest from the image's
// trust anchor.
absl::Status ImportDmVerity(const PutOptions& opts, const std::string& file,
                            sdk::PutOptions* put) {
  struct stat st;
  if (stat(file.c_str(), &st) != 0) return absl::ErrnoToStatus(errno, file);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  ASSIGN_OR_RETURN(const sdk::DmVerityRoot root,
                   ResolveDmVerityRoot(opts.dm_verity, size));
  ASSIGN_OR_RETURN(put->expected_digest, sdk::Digest::OfDmVerity(root));
  put->hash_algorithm = root.hash_algorithm;
  put->block_size = root.data_block_size;
  put->salt = root.salt;
  return absl::OkStatus();
}

sdk::PutOptions ToPutOptions(const PutOptions& opts) {
  sdk::PutOptions put;
  put.hash_algorithm =
      static_cast<sdk::DigestAlgorithm>(opts.params.hash_algorithm);
  put.block_size = opts.params.block_size;
  put.salt = opts.params.salt;
  put.format = static_cast<sdk::TreeFormat>(opts.params.format);
  put.name = opts.name;
  put.hash_threads = MachineThreads();
  return put;
}

// A directory: a tree of blobs with the default block size and no salt.
absl::Status PutOneFolder(sdk::Client& client, const PutOptions& opts,
                          const std::string& folder, std::FILE* out,
                          std::FILE* err) {
  const MerkleParams defaults;
  if (opts.params.block_size != defaults.block_size ||
      !opts.params.salt.empty() || opts.params.format != defaults.format ||
      !opts.fsverity_sig_file.empty() || opts.dm_verity.given()) {
    return absl::InvalidArgumentError(
        "a directory is stored as a tree of blobs of 4096-byte blocks: "
        "--block-size, --salt, --format, --fsverity-sig and --root-hash do "
        "not apply");
  }
  PutFolderOptions put;
  put.hash_algorithm = opts.params.hash_algorithm;
  put.name = opts.name;
  put.signing = opts.signing;
  put.parallel = opts.parallel;
  return PutFolder(client, folder, put, out, err);
}

absl::Status PutOneFile(sdk::Client& client, const PutOptions& opts,
                        const std::string& file, std::FILE* out) {
  sdk::PutOptions put = ToPutOptions(opts);
  if (opts.dm_verity.given()) RETURN_IF_ERROR(ImportDmVerity(opts, file, &put));
  if (!opts.signing.key_file.empty()) {
    RETURN_IF_ERROR(Sign(client, opts, file, &put));
  }
  if (!opts.fsverity_sig_file.empty()) {
    ASSIGN_OR_RETURN(
        put.fsverity_signature,
        ReadSmallFile(opts.fsverity_sig_file, kMaxFsveritySignatureBytes));
  }
  ASSIGN_OR_RETURN(const sdk::PutResult result, client.PutFile(file, put));
  std::string line = absl::StrCat(result.info.digest.ToString(), " ", file);
  if (result.info.format == sdk::TreeFormat::kDmVerity) {
    absl::StrAppend(
        &line, " roothash=", absl::BytesToHexString(result.info.root_hash));
  }
  line += "\n";
  std::fwrite(line.data(), 1, line.size(), out);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PutOptions> ParsePutOptions(int argc, char** argv) {
  PutOptions opts;
  ASSIGN_OR_RETURN(CommandLine line,
                   ParseCommandLine(argc, argv, PutFlags(&opts)));
  opts.connection = std::move(line.connection);
  opts.files = std::move(line.operands);
  RETURN_IF_ERROR(ValidateMerkleParams(opts.params));
  if (opts.files.empty()) {
    return absl::InvalidArgumentError("no FILE or DIR given");
  }
  if (opts.dm_verity.given()) {
    if (opts.files.size() != 1) {
      return absl::InvalidArgumentError("--root-hash needs exactly one IMAGE");
    }
    const MerkleParams defaults;
    if (opts.params.hash_algorithm != defaults.hash_algorithm ||
        opts.params.block_size != defaults.block_size ||
        !opts.params.salt.empty()) {
      return absl::InvalidArgumentError(
          "with --root-hash, the parameters come from --hash-device or "
          "--verity-params, not --hash-alg, --block-size or --salt");
    }
    opts.params.format = TreeFormat::kDmVerity;
  }
  if (!opts.name.empty() && opts.files.size() != 1) {
    return absl::InvalidArgumentError("--name needs exactly one FILE");
  }
  if (!opts.fsverity_sig_file.empty() && opts.files.size() != 1) {
    return absl::InvalidArgumentError("--fsverity-sig needs exactly one FILE");
  }
  if (opts.signing.key_file.empty() &&
      (opts.signing.version.has_value() || !opts.signing.state_dir.empty() ||
       opts.signing.expires_in != kDefaultStatementLifetime)) {
    return absl::InvalidArgumentError(
        "--version, --expires-in and --state-dir need --sign-key");
  }
  if (!opts.signing.key_file.empty() && opts.name.empty()) {
    return absl::InvalidArgumentError("--sign-key needs --name");
  }
  return opts;
}

int RunPutCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const std::string usage = absl::StrCat(kUsage, kSigningUsage);
  if (AsksForHelp(argc, argv)) return PrintHelp(usage, out);
  absl::StatusOr<PutOptions> opts = ParsePutOptions(argc, argv);
  if (!opts.ok()) return UsageError("put", opts.status(), usage, err);
  absl::StatusOr<std::unique_ptr<sdk::Client>> client =
      client::CreateClient(opts->connection);
  if (!client.ok()) return ReportStatus("put", client.status(), err);
  for (const std::string& file : opts->files) {
    const absl::Status status =
        IsFolder(file) ? PutOneFolder(**client, *opts, file, out, err)
                       : PutOneFile(**client, *opts, file, out);
    if (!status.ok()) {
      return ReportStatus(
          "put",
          absl::Status(status.code(),
                       absl::StrCat(file, ": ", status.message())),
          err);
    }
  }
  return kExitOk;
}

}  // namespace verity::cli
