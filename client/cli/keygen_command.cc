// Implements `verity keygen` on lib's Ed25519PrivateKey; files are created
// exclusively (O_EXCL) and fsync'd, the private one readable only by its
// owner from the start.

#include "client/cli/keygen_command.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "client/cli/command_line.h"
#include "client/cli/exit_codes.h"
#include "client/cli/flag_values.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/trust/ed25519_key.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity keygen --out=FILE\n"
    "Makes an Ed25519 key for `verity sign` and `verity put --sign-key`:\n"
    "writes the private key to FILE (PKCS#8 PEM, as `openssl genpkey\n"
    "-algorithm ed25519` does; mode 0600) and the public key to FILE.pub\n"
    "(PEM, for clients' --trusted-keys), refusing to replace either, and\n"
    "prints the key id (SHA-256 of the DER public key) and the public key.\n";

absl::Status CreateExclusively(const std::string& path,
                               const std::string& contents, mode_t mode) {
  absl::StatusOr<UniqueFd> fd =
      OpenFile(path, O_WRONLY | O_CREAT | O_EXCL, mode);
  if (absl::IsAlreadyExists(fd.status())) {
    return absl::AlreadyExistsError(
        absl::StrCat(path, " exists; not replacing it"));
  }
  RETURN_IF_ERROR(fd.status());
  RETURN_IF_ERROR(WriteAll(fd->get(), AsBytes(contents), path));
  RETURN_IF_ERROR(Fsync(fd->get(), path));
  return fd->Close(path);
}

absl::Status Keygen(const std::string& path, std::FILE* out) {
  const std::string pub_path = path + ".pub";
  struct stat st;
  for (const std::string& p : {path, pub_path}) {
    if (lstat(p.c_str(), &st) == 0) {
      return absl::AlreadyExistsError(
          absl::StrCat(p, " exists; not replacing it"));
    }
  }
  const Ed25519PrivateKey key = Ed25519PrivateKey::Generate();
  std::string pem = key.ToPem();
  const absl::Status written = CreateExclusively(path, pem, 0600);
  std::fill(pem.begin(), pem.end(), '\0');
  RETURN_IF_ERROR(written);
  const std::string public_pem = key.public_key().ToPem();
  RETURN_IF_ERROR(CreateExclusively(pub_path, public_pem, 0644));
  RETURN_IF_ERROR(FsyncDir(DirName(path)));
  const std::string text = absl::StrCat(
      "key id: ", KeyIdToHex(key.public_key().id()), "\n", public_pem);
  std::fwrite(text.data(), 1, text.size(), out);
  return absl::OkStatus();
}

}  // namespace

int RunKeygenCommand(int argc, char** argv, std::FILE* out, std::FILE* err) {
  if (AsksForHelp(argc, argv)) {
    std::fputs(kUsage, out);
    return kExitOk;
  }
  std::string path;
  const absl::StatusOr<std::vector<std::string>> operands =
      ParseFlags(argc, argv, {{"out", 0, true, [&path](absl::string_view v) {
                                 path = std::string(v);
                                 return absl::OkStatus();
                               }}});
  absl::Status status = operands.status();
  if (status.ok() && !operands->empty()) {
    status = absl::InvalidArgumentError("keygen takes no operand");
  }
  if (status.ok() && path.empty()) {
    status = absl::InvalidArgumentError("--out=FILE is required");
  }
  if (!status.ok()) {
    std::fprintf(err, "verity keygen: %s\n%s",
                 std::string(status.message()).c_str(), kUsage);
    return kExitUsage;
  }
  return ReportStatus("keygen", Keygen(path, out), err);
}

}  // namespace verity::cli
