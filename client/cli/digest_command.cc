// Implements `verity digest`. Options are parsed with getopt_long, as
// fsverity-utils does, so the same command lines are accepted in the same
// places.

#include "client/cli/digest_command.h"

#include <getopt.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "lib/descriptor.h"
#include "lib/file_digest.h"
#include "lib/status_macros.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity digest FILE... [--hash-alg=sha256|sha512] [--block-size=N] "
    "[--salt=HEX]\n"
    "                             [--out-merkle-tree=FILE] "
    "[--out-descriptor=FILE]\n"
    "                             [--compact] [--for-builtin-sig] "
    "[--threads=N]\n";

enum Option : int {
  kHashAlg = 256,
  kBlockSize,
  kSalt,
  kOutMerkleTree,
  kOutDescriptor,
  kCompact,
  kForBuiltinSig,
  kThreads,
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
    {nullptr, 0, nullptr, 0},
};

absl::StatusOr<int> ParseThreads(absl::string_view text) {
  int value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 1 || value > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid thread count '", text, "': must be 1..256"));
  }
  return value;
}

// Applies one option; `seen` rejects repeats, as fsverity does.
absl::Status ApplyOption(int option, absl::string_view arg, DigestOptions* opts,
                         std::vector<int>* seen) {
  if (std::find(seen->begin(), seen->end(), option) != seen->end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", kLongOptions[option - kHashAlg].name,
                     " can only be specified once"));
  }
  seen->push_back(option);
  switch (option) {
    case kHashAlg: {
      ASSIGN_OR_RETURN(opts->params.hash_algorithm, ParseHashAlgorithm(arg));
      return absl::OkStatus();
    }
    case kBlockSize: {
      ASSIGN_OR_RETURN(opts->params.block_size, ParseBlockSizeFlag(arg));
      return absl::OkStatus();
    }
    case kSalt: {
      ASSIGN_OR_RETURN(opts->params.salt, ParseHexFlag("salt", arg));
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
  RETURN_IF_ERROR(ValidateMerkleParams(opts.params));
  opts.files.assign(argv + optind, argv + argc);
  if (opts.files.empty()) return absl::InvalidArgumentError("no FILE given");
  if (opts.threads == 0)
    opts.threads = std::max(1u, std::thread::hardware_concurrency());
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
    status =
        DigestOneFile(*opts, opts->files[i], &tree_out, &descriptor_out, out);
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
