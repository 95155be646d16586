// Implements the signer on lib/fsverity_cli's shell helpers.

#include "client/testing/fsverity_signer.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/testing/fsverity_cli.h"

namespace verity::client {

absl::StatusOr<FsveritySigner> MakeFsveritySigner(absl::string_view name,
                                                  int serial) {
  FsveritySigner signer{absl::StrCat(TestTempDir(), "/", name, ".key"),
                        absl::StrCat(TestTempDir(), "/", name, ".crt"), ""};
  RETURN_IF_ERROR(
      RunShellCommand(
          absl::StrCat("openssl req -x509 -nodes -days 2 -newkey ec "
                       "-pkeyopt ec_paramgen_curve:prime256v1 -subj ",
                       ShellQuote(absl::StrCat("/CN=", name)), " -set_serial ",
                       serial, " -keyout ", ShellQuote(signer.key_path),
                       " -out ", ShellQuote(signer.cert_path), " 2>&1"))
          .status());
  ASSIGN_OR_RETURN(signer.cert_pem, ReadTestFile(signer.cert_path));
  return signer;
}

absl::StatusOr<std::string> FsveritySign(const FsveritySigner& signer,
                                         const TestBlob& blob,
                                         const MerkleParams& params) {
  ASSIGN_OR_RETURN(
      const std::string path,
      WriteTestFile(absl::StrCat("blob-", blob.digest_text.substr(7, 16)),
                    blob.data));
  ASSIGN_OR_RETURN(
      const FsveritySignOutput out,
      RunFsveritySign(path, params, signer.key_path, signer.cert_path));
  if (out.line.find(blob.digest_text) == std::string::npos) {
    return absl::InternalError(absl::StrCat("fsverity sign printed `", out.line,
                                            "`, not ", blob.digest_text));
  }
  return out.signature;
}

}  // namespace verity::client
