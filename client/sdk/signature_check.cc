// Implements SignatureCheck on lib's VerifyFsveritySignature.

#include "client/sdk/signature_check.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace verity::client {

absl::StatusOr<std::unique_ptr<SignatureCheck>> SignatureCheck::Create(
    const sdk::ClientOptions& options) {
  if (options.fsverity_certs.empty()) return nullptr;
  absl::StatusOr<FsverityCertificates> certs =
      FsverityCertificates::FromPem(options.fsverity_certs);
  if (!certs.ok()) {
    return absl::Status(
        certs.status().code(),
        absl::StrCat("fs-verity certificates: ", certs.status().message()));
  }
  return std::make_unique<SignatureCheck>(*std::move(certs));
}

absl::Status SignatureCheck::Check(const ParsedDigest& digest,
                                   absl::string_view signature) const {
  if (signature.empty()) {
    return absl::DataLossError(
        absl::StrCat("refused blob ", digest.ToString(),
                     ": the server sent no fs-verity signature for it"));
  }
  const absl::Status status =
      VerifyFsveritySignature(digest, signature, certs_);
  if (status.ok() || !absl::IsDataLoss(status)) return status;
  return absl::DataLossError(
      absl::StrCat("refused blob ", digest.ToString(), ": ", status.message()));
}

}  // namespace verity::client
