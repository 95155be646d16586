// Implements `verity digest`. Options are parsed with getopt_long, as
// fsverity-utils does, so the same command lines are accepted in the same
// places.

#include "client/cli/digest_command.h"

#include <getopt.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "lib/base/status_macros.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/file_digest.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity digest FILE... [--hash-alg=sha256|sha512] [--block-size=N] "
    "[--salt=HEX]\n"
    "                             [--out-merkle-tree=FILE] "
    "[--out-descriptor=FILE]\n"
    "                             [--compact] [--for-builtin-sig] "
    "[--threads=N]\n"
    "       verity digest --format=dm-verity FILE... "
    "[--hash-alg=sha256|sha512]\n"
    "                             [--data-block-size=N] [--hash-block-size=N] "
    "[--format-version=0|1]\n"
    "                             [--salt=HEX|-] [--out-hash-tree=FILE] "
    "[--no-superblock] [--uuid=UUID]\n"
    "                             [--fec-device=FILE [--fec-roots=2..24]]\n"
    "--format=dm-verity prints the root hash and parameters as `veritysetup "
    "format` does;\n"
    "without --salt the salt is 32 random bytes, as there (--salt=- for none), "
    "and\n"
    "--out-hash-tree writes the hash device, with the superblock unless "
    "--no-superblock,\n"
    "and --fec-device its Reed-Solomon FEC (2 roots unless --fec-roots).\n";

enum Option : int {
  kHashAlg = 256,
  kBlockSize,
  kSalt,
  kOutMerkleTree,
  kOutDescriptor,
  kCompact,
  kForBuiltinSig,
  kThreads,
  kFormat,
  kDataBlockSize,
  kHashBlockSize,
  kFormatVersion,
  kOutHashTree,
  kNoSuperblock,
  kUuid,
  kFecDevice,
  kFecRoots,
};

constexpr struct option kLongOptions[] = {
    {"hash-alg", required_argument, nullptr, kHashAlg},
    {"block-size", required_argument, nullptr, kBlockSize},
    {"salt", required_argument, nullptr, kSalt},
    {"out-merkle-tree", required_argument, nullptr, kOutMerkleTree},
    {"out-descriptor", required_argument, nullptr, kOutDescriptor},
    {"compact", no_argument, nullptr, kCompact},
    {"for-builtin-sig", no_argument, nullptr, kForBuiltinSig},
    {"threads", required_argument, nullptr, kThreads},
    {"format", required_argument, nullptr, kFormat},
    {"data-block-size", required_argument, nullptr, kDataBlockSize},
    {"hash-block-size", required_argument, nullptr, kHashBlockSize},
    {"format-version", required_argument, nullptr, kFormatVersion},
    {"out-hash-tree", required_argument, nullptr, kOutHashTree},
    {"no-superblock", no_argument, nullptr, kNoSuperblock},
    {"uuid", required_argument, nullptr, kUuid},
    {"fec-device", required_argument, nullptr, kFecDevice},
    {"fec-roots", required_argument, nullptr, kFecRoots},
    {nullptr, 0, nullptr, 0},
};

// The options that only one format takes.
constexpr Option kFsVerityOnly[] = {kBlockSize, kOutMerkleTree, kOutDescriptor,
                                    kCompact,   kForBuiltinSig, kThreads};
constexpr Option kDmVerityOnly[] = {
    kDataBlockSize, kHashBlockSize, kFormatVersion, kOutHashTree,
    kNoSuperblock,  kUuid,          kFecDevice,     kFecRoots};

const char* OptionName(int option) {
  return kLongOptions[option - kHashAlg].name;
}

absl::StatusOr<int> ParseThreads(absl::string_view text) {
  int value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 1 || value > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid thread count '", text, "': must be 1..256"));
  }
  return value;
}

absl::Status ApplyDmVerityOption(int option, absl::string_view arg,
                                 DigestOptions* opts) {
  DmVerityDigestOptions& dm = opts->dm_verity;
  switch (option) {
    case kFormat:
      if (arg != "fs-verity" && arg != "dm-verity") {
        return absl::InvalidArgumentError(absl::StrCat(
            "--format is fs-verity or dm-verity, not '", arg, "'"));
      }
      opts->dm_verity_format = arg == "dm-verity";
      return absl::OkStatus();
    case kDataBlockSize: {
      ASSIGN_OR_RETURN(dm.params.data_block_size, ParseBlockSizeFlag(arg));
      return absl::OkStatus();
    }
    case kHashBlockSize: {
      ASSIGN_OR_RETURN(dm.params.hash_block_size, ParseBlockSizeFlag(arg));
      return absl::OkStatus();
    }
    case kFormatVersion:
      if (arg != "0" && arg != "1") {
        return absl::InvalidArgumentError(
            absl::StrCat("--format-version is 0 or 1, not '", arg, "'"));
      }
      dm.params.format = arg == "1" ? 1 : 0;
      return absl::OkStatus();
    case kOutHashTree:
      dm.out_hash_tree = std::string(arg);
      return absl::OkStatus();
    case kNoSuperblock:
      dm.superblock = false;
      return absl::OkStatus();
    case kFecDevice:
      dm.fec_device = std::string(arg);
      return absl::OkStatus();
    case kFecRoots:
      if (!absl::SimpleAtoi(arg, &dm.fec_roots) ||
          !ValidateFecRoots(dm.fec_roots).ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--fec-roots is ", kMinFecRoots, " to ", kMaxFecRoots,
                         ", not '", arg, "'"));
      }
      return absl::OkStatus();
    case kUuid: {
      ASSIGN_OR_RETURN(dm.uuid, ParseUuid(arg));
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError("unrecognized option");
}

// INVALID_ARGUMENT if an option `seen` belongs to the other format.
absl::Status CheckFormatOptions(const DigestOptions& opts,
                                const std::vector<int>& seen) {
  const absl::Span<const Option> foreign =
      opts.dm_verity_format ? absl::MakeConstSpan(kFsVerityOnly)
                            : absl::MakeConstSpan(kDmVerityOnly);
  for (int option : seen) {
    if (std::find(foreign.begin(), foreign.end(), option) != foreign.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", OptionName(option), " is not for --format=",
                       opts.dm_verity_format ? "dm-verity" : "fs-verity"));
    }
  }
  return absl::OkStatus();
}

// Applies one option; `seen` rejects repeats, as fsverity does.
absl::Status ApplyOption(int option, absl::string_view arg, DigestOptions* opts,
                         std::vector<int>* seen) {
  if (std::find(seen->begin(), seen->end(), option) != seen->end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", OptionName(option), " can only be specified once"));
  }
  seen->push_back(option);
  switch (option) {
    case kHashAlg: {
      ASSIGN_OR_RETURN(opts->params.hash_algorithm, ParseHashAlgorithm(arg));
      opts->dm_verity.params.algorithm = opts->params.hash_algorithm;
      return absl::OkStatus();
    }
    case kBlockSize: {
      ASSIGN_OR_RETURN(opts->params.block_size, ParseBlockSizeFlag(arg));
      return absl::OkStatus();
    }
    case kSalt: {
      // dm-verity's "-" (none) is told apart once the format is known.
      opts->dm_verity.random_salt = false;
      opts->salt_none = arg == "-";
      if (opts->salt_none) return absl::OkStatus();
      ASSIGN_OR_RETURN(opts->params.salt, ParseHexFlag("salt", arg));
      opts->dm_verity.params.salt = opts->params.salt;
      return absl::OkStatus();
    }
    case kOutMerkleTree:
      opts->out_merkle_tree = std::string(arg);
      return absl::OkStatus();
    case kOutDescriptor:
      opts->out_descriptor = std::string(arg);
      return absl::OkStatus();
    case kCompact:
      opts->compact = true;
      return absl::OkStatus();
    case kForBuiltinSig:
      opts->for_builtin_sig = true;
      return absl::OkStatus();
    case kThreads: {
      ASSIGN_OR_RETURN(opts->threads, ParseThreads(arg));
      return absl::OkStatus();
    }
    default:
      return ApplyDmVerityOption(option, arg, opts);
  }
  return absl::InvalidArgumentError("unrecognized option");
}

// An output file named by an option: truncated when opened, then written once
// per input file.
class OutputFile {
 public:
  absl::Status Open(const std::string& path) {
    path_ = path;
    if (path.empty()) return absl::OkStatus();
    stream_.open(path, std::ios::binary | std::ios::trunc);
    return Check();
  }

  absl::Status Write(absl::string_view contents, bool at_start) {
    if (path_.empty()) return absl::OkStatus();
    if (at_start) stream_.seekp(0);
    stream_.write(contents.data(), contents.size());
    stream_.flush();
    return Check();
  }

 private:
  absl::Status Check() {
    if (stream_) return absl::OkStatus();
    return absl::PermissionDeniedError(
        absl::StrCat("can't write '", path_, "': ", std::strerror(errno)));
  }

  std::string path_;
  std::ofstream stream_;
};

// struct fsverity_formatted_digest: what the kernel's built-in signatures sign.
std::string FormattedDigestForBuiltinSig(HashAlgorithm algorithm,
                                         absl::string_view digest) {
  std::string formatted = "FSVerity";
  const uint16_t alg = static_cast<uint16_t>(algorithm);
  const uint16_t size = static_cast<uint16_t>(digest.size());
  formatted.push_back(static_cast<char>(alg & 0xff));
  formatted.push_back(static_cast<char>(alg >> 8));
  formatted.push_back(static_cast<char>(size & 0xff));
  formatted.push_back(static_cast<char>(size >> 8));
  return absl::StrCat(formatted, digest);
}

std::string OutputLine(const DigestOptions& opts, const MerkleTree& tree,
                       absl::string_view file) {
  const HashAlgorithm alg = opts.params.hash_algorithm;
  std::string hex = absl::BytesToHexString(
      opts.for_builtin_sig ? FormattedDigestForBuiltinSig(alg, tree.digest)
                           : tree.digest);
  if (opts.compact) return absl::StrCat(hex, "\n");
  if (opts.for_builtin_sig) return absl::StrCat(hex, " ", file, "\n");
  return absl::StrCat(HashAlgorithmName(alg), ":", hex, " ", file, "\n");
}

absl::Status DigestOneFile(const DigestOptions& opts, const std::string& file,
                           OutputFile* tree_out, OutputFile* descriptor_out,
                           std::FILE* out) {
  ASSIGN_OR_RETURN(MerkleTree tree,
                   BuildMerkleTreeFromFile(file, opts.params, opts.threads));
  ASSIGN_OR_RETURN(std::string descriptor, tree.descriptor.Serialize());
  RETURN_IF_ERROR(tree_out->Write(tree.tree, /*at_start=*/true));
  RETURN_IF_ERROR(descriptor_out->Write(descriptor, /*at_start=*/false));
  const std::string line = OutputLine(opts, tree, file);
  std::fwrite(line.data(), 1, line.size(), out);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DigestOptions> ParseDigestOptions(int argc, char** argv) {
  DigestOptions opts;
  std::vector<int> seen;
  optind = 0;  // glibc: restart scanning, so the parser can run more than once
               // per process.
  opterr = 0;
  int option;
  while ((option = getopt_long(argc, argv, "", kLongOptions, nullptr)) != -1) {
    if (option == '?') {
      return absl::InvalidArgumentError(absl::StrCat(
          "unrecognized or incomplete option '", argv[optind - 1], "'"));
    }
    RETURN_IF_ERROR(ApplyOption(option, optarg ? optarg : "", &opts, &seen));
  }
  RETURN_IF_ERROR(CheckFormatOptions(opts, seen));
  if (opts.salt_none && !opts.dm_verity_format) {
    return absl::InvalidArgumentError("--salt=- is for --format=dm-verity");
  }
  if (opts.dm_verity_format) {
    RETURN_IF_ERROR(ValidateDmVerityParams(opts.dm_verity.params));
    const DmVerityParams& params = opts.dm_verity.params;
    if (!opts.dm_verity.fec_device.empty() &&
        params.data_block_size != params.hash_block_size) {
      // veritysetup: "Block sizes must match for FEC."
      return absl::InvalidArgumentError(
          "--fec-device needs equal --data-block-size and --hash-block-size");
    }
  } else {
    RETURN_IF_ERROR(ValidateMerkleParams(opts.params));
  }
  opts.files.assign(argv + optind, argv + argc);
  if (opts.files.empty()) return absl::InvalidArgumentError("no FILE given");
  if (opts.threads == 0) opts.threads = MachineThreads();
  return opts;
}

int RunDigestCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) {
    std::fputs(kUsage, out);
    return kExitOk;
  }
  absl::StatusOr<DigestOptions> opts = ParseDigestOptions(argc, argv);
  if (!opts.ok()) {
    std::fprintf(err, "verity digest: %s\n%s",
                 std::string(opts.status().message()).c_str(), kUsage);
    return kExitUsage;
  }
  OutputFile tree_out, descriptor_out;
  absl::Status status = tree_out.Open(opts->out_merkle_tree);
  if (status.ok()) status = descriptor_out.Open(opts->out_descriptor);
  for (size_t i = 0; status.ok() && i < opts->files.size(); ++i) {
    status = opts->dm_verity_format
                 ? DmVerityDigestFile(opts->files[i], opts->dm_verity, out)
                 : DigestOneFile(*opts, opts->files[i], &tree_out,
                                 &descriptor_out, out);
    if (!status.ok())
      status = absl::Status(
          status.code(), absl::StrCat(opts->files[i], ": ", status.message()));
  }
  if (!status.ok()) {
    std::fprintf(err, "verity digest: %s\n",
                 std::string(status.message()).c_str());
  }
  return ExitCodeFor(status);
}

}  // namespace verity::cli
