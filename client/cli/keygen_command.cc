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
#include "lib/tlog/signed_note.h"
#include "lib/trust/ed25519_key.h"

namespace verity::cli {
namespace {

constexpr char kUsage[] =
    "Usage: verity keygen --out=FILE [--log-origin=NAME | "
    "--witness-name=NAME]\n"
    "Makes an Ed25519 key for `verity sign` and `verity put --sign-key`:\n"
    "writes the private key to FILE (PKCS#8 PEM, as `openssl genpkey\n"
    "-algorithm ed25519` does; mode 0600) and the public key to FILE.pub\n"
    "(PEM, for clients' --trusted-keys), refusing to replace either, and\n"
    "prints the key id (SHA-256 of the DER public key) and the public key.\n"
    "With --log-origin, the key is a transparency log's (verityd --log_key\n"
    "FILE --log_origin NAME): also writes FILE.vkey, the log's note\n"
    "verifier key NAME+ID+KEY (C2SP signed-note), for clients' --log-key.\n"
    "With --witness-name, the key is a witness's (verity witness\n"
    "--witness-key FILE --witness-name NAME): FILE.vkey is its cosignature\n"
    "verifier key (C2SP tlog-cosignature), for verityd's --witnesses and\n"
    "clients' --witness-keys.\n";

// The note verifier key FILE.vkey holds: a log's or a witness's.
struct VkeyName {
  std::string name;  // empty: no FILE.vkey
  tlog::NoteKeyType type = tlog::NoteKeyType::kEd25519;
};

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

absl::Status Keygen(const std::string& path, const VkeyName& vkey_name,
                    std::FILE* out) {
  const std::string pub_path = path + ".pub";
  const std::string vkey_path = path + ".vkey";
  struct stat st;
  for (const std::string& p : {path, pub_path, vkey_path}) {
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
  std::string vkey;
  if (!vkey_name.name.empty()) {
    ASSIGN_OR_RETURN(
        const tlog::NoteKey note_key,
        tlog::NoteKey::Make(vkey_name.name, vkey_name.type, key.public_key()));
    vkey = note_key.ToString() + "\n";
    RETURN_IF_ERROR(CreateExclusively(vkey_path, vkey, 0644));
  }
  RETURN_IF_ERROR(FsyncDir(DirName(path)));
  std::string text = absl::StrCat("key id: ", KeyIdToHex(key.public_key().id()),
                                  "\n", public_pem);
  if (!vkey.empty()) {
    absl::StrAppend(&text,
                    vkey_name.type == tlog::NoteKeyType::kEd25519
                        ? "log verifier key: "
                        : "witness verifier key: ",
                    vkey);
  }
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
  std::string log_origin;
  std::string witness_name;
  const absl::StatusOr<std::vector<std::string>> operands = ParseFlags(
      argc, argv,
      {{"out", 0, true,
        [&path](absl::string_view v) {
          path = std::string(v);
          return absl::OkStatus();
        }},
       {"log-origin", 0, true,
        [&log_origin](absl::string_view v) {
          log_origin = std::string(v);
          return absl::OkStatus();
        }},
       {"witness-name", 0, true, [&witness_name](absl::string_view v) {
          witness_name = std::string(v);
          return absl::OkStatus();
        }}});
  absl::Status status = operands.status();
  if (status.ok() && !operands->empty()) {
    status = absl::InvalidArgumentError("keygen takes no operand");
  }
  if (status.ok() && path.empty()) {
    status = absl::InvalidArgumentError("--out=FILE is required");
  }
  if (status.ok() && !log_origin.empty() && !witness_name.empty()) {
    status = absl::InvalidArgumentError(
        "a key is a log's (--log-origin) or a witness's (--witness-name)");
  }
  if (!status.ok()) {
    std::fprintf(err, "verity keygen: %s\n%s",
                 std::string(status.message()).c_str(), kUsage);
    return kExitUsage;
  }
  const VkeyName vkey_name =
      witness_name.empty()
          ? VkeyName{log_origin, tlog::NoteKeyType::kEd25519}
          : VkeyName{witness_name, tlog::NoteKeyType::kCosignatureV1};
  return ReportStatus("keygen", Keygen(path, vkey_name, out), err);
}

}  // namespace verity::cli
