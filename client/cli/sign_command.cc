// Implements `verity sign` on name_signing and, for --store, the SDK's
// SetName. The server is asked nothing when --version is given and the
// statement is not stored.

#include "client/cli/sign_command.h"

#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "verity/client.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity sign NAME DIGEST --key=FILE [--tree] [--version=N]\n"
    "                   [--expires-in=DURATION] [--state-dir=DIR]\n"
    "                   [--out=FILE | --store]\n"
    "Signs the statement \"NAME means DIGEST, a file\" (with --tree: \"a\n"
    "tree\", for the digest `verity put DIR` prints) with the Ed25519 private "
    "key\n"
    "in FILE (PKCS#8 PEM: `verity keygen` or `openssl genpkey -algorithm\n"
    "ed25519`). Prints it in base64 on one line, or with --out writes it\n"
    "(binary) to FILE, or with --store stores it with the name on the server\n"
    "(SetName: the name then means DIGEST, which must be stored).\n";

std::vector<CommandFlag> SignFlags(SignOptions* opts) {
  std::vector<CommandFlag> flags = SigningFlags(&opts->signing, "key");
  flags.push_back({"out", 0, true, [opts](absl::string_view v) {
                     if (v.empty()) {
                       return absl::InvalidArgumentError("--out is empty");
                     }
                     opts->out = std::string(v);
                     return absl::OkStatus();
                   }});
  flags.push_back({"store", 0, false, [opts](absl::string_view) {
                     opts->store = true;
                     return absl::OkStatus();
                   }});
  flags.push_back({"tree", 0, false, [opts](absl::string_view) {
                     opts->tree = true;
                     return absl::OkStatus();
                   }});
  return flags;
}

// Writes, prints or stores `statement`.
absl::Status Deliver(const SignOptions& opts, sdk::Client* client,
                     const std::string& statement, std::FILE* out) {
  if (!opts.out.empty()) {
    return ReplaceFileDurably(absl::StrCat(opts.out, ".tmp"), opts.out,
                              statement);
  }
  if (!opts.store) {
    const std::string line = absl::StrCat(absl::Base64Escape(statement), "\n");
    std::fwrite(line.data(), 1, line.size(), out);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const sdk::Digest digest,
                   sdk::Digest::Parse(opts.digest.ToString()));
  ASSIGN_OR_RETURN(const sdk::BlobInfo info,
                   client->SetName(opts.name, digest, statement));
  const std::string line =
      absl::StrCat(info.digest.ToString(), " ", opts.name, "\n");
  std::fwrite(line.data(), 1, line.size(), out);
  return absl::OkStatus();
}

absl::Status Sign(const SignOptions& opts, std::FILE* out) {
  std::unique_ptr<sdk::Client> client;
  if (opts.store || !opts.signing.version.has_value()) {
    ASSIGN_OR_RETURN(client, client::CreateClient(opts.connection));
  }
  ASSIGN_OR_RETURN(
      const std::string statement,
      SignName(opts.signing, opts.name, opts.digest,
               opts.tree ? NameKind::kTree : NameKind::kFile, client.get()));
  return Deliver(opts, client.get(), statement, out);
}

}  // namespace

absl::StatusOr<SignOptions> ParseSignOptions(int argc, char** argv) {
  SignOptions opts;
  ASSIGN_OR_RETURN(CommandLine line,
                   ParseCommandLine(argc, argv, SignFlags(&opts)));
  opts.connection = std::move(line.connection);
  if (line.operands.size() != 2) {
    return absl::InvalidArgumentError("expected NAME and DIGEST");
  }
  opts.name = line.operands[0];
  ASSIGN_OR_RETURN(opts.digest, ParseDigest(line.operands[1]));
  if (opts.signing.key_file.empty()) {
    return absl::InvalidArgumentError("--key=FILE is required");
  }
  if (opts.store && !opts.out.empty()) {
    return absl::InvalidArgumentError("--out and --store exclude each other");
  }
  return opts;
}

int RunSignCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const std::string usage = absl::StrCat(kUsage, kSigningUsage);
  if (AsksForHelp(argc, argv)) return PrintHelp(usage, out);
  const absl::StatusOr<SignOptions> opts = ParseSignOptions(argc, argv);
  if (!opts.ok()) return UsageError("sign", opts.status(), usage, err);
  const absl::Status status = Sign(*opts, out);
  return ReportStatus(
      "sign",
      status.ok() ? status
                  : absl::Status(status.code(), absl::StrCat(opts->name, ": ",
                                                             status.message())),
      err);
}

}  // namespace verity::cli
