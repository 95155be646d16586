// Rebuilds the message `fsverity sign` signs and has OpenSSL 3 check the
// signature over it.

#include "lib/trust/fsverity_signature.h"

#include <cstdint>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/little_endian.h"
#include "lib/hash/hash.h"

namespace verity {
namespace {

constexpr char kMagic[] = "FSVerity";  // 8 bytes, no terminator in the message

// The library's messages complete "signature ...": see openssl3_pkcs7.h.
absl::Status Explain(const absl::Status& status, absl::StatusCode code,
                     absl::string_view what = "fs-verity signature") {
  if (!absl::IsInvalidArgument(status) && !absl::IsDataLoss(status)) {
    return status;
  }
  return absl::Status(code, absl::StrCat(what, " ", status.message()));
}

absl::Status CheckSize(absl::string_view der_signature) {
  if (der_signature.size() > kMaxFsveritySignatureSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("is ", der_signature.size(), " bytes, more than the ",
                     kMaxFsveritySignatureSize, " fs-verity allows"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string FormattedDigest(const ParsedDigest& digest) {
  std::string message(kMagic, sizeof(kMagic) - 1);
  AppendLittleEndian(static_cast<uint16_t>(digest.algorithm), 2, &message);
  AppendLittleEndian(static_cast<uint16_t>(digest.digest.size()), 2, &message);
  message += digest.digest;
  return message;
}

absl::StatusOr<FsverityCertificates> FsverityCertificates::FromPem(
    absl::string_view pem) {
  absl::StatusOr<std::shared_ptr<const Openssl3Certificates>> certs =
      Openssl3Certificates::FromPem(pem);
  if (!certs.ok()) return certs.status();
  return FsverityCertificates(*std::move(certs));
}

absl::Status VerifyFsveritySignature(const ParsedDigest& digest,
                                     absl::string_view der_signature,
                                     const FsverityCertificates& pinned) {
  if (!IsValidHashAlgorithm(static_cast<uint8_t>(digest.algorithm)) ||
      digest.digest.size() != DigestSize(digest.algorithm)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot check a signature of a malformed digest (",
                     digest.digest.size(), " bytes, algorithm ",
                     static_cast<int>(digest.algorithm), ")"));
  }
  // A signature the server should not have stored is still only a refusal.
  absl::Status status = CheckSize(der_signature);
  if (status.ok()) {
    status = VerifyDetachedPkcs7(der_signature, FormattedDigest(digest),
                                 *pinned.certs_);
  }
  return Explain(status, absl::StatusCode::kDataLoss);
}

absl::Status VerifyRootHashSignature(absl::string_view root_hash,
                                     absl::string_view der_signature,
                                     const FsverityCertificates& pinned) {
  if (root_hash.empty()) {
    return absl::InvalidArgumentError("no root hash to check a signature of");
  }
  absl::Status status = CheckSize(der_signature);
  if (status.ok()) {
    status = VerifyDetachedPkcs7(
        der_signature, absl::BytesToHexString(root_hash), *pinned.certs_);
  }
  return Explain(status, absl::StatusCode::kDataLoss, "root hash signature");
}

absl::Status CheckFsveritySignatureFormat(absl::string_view der_signature) {
  absl::Status status = CheckSize(der_signature);
  if (status.ok()) status = CheckDetachedPkcs7(der_signature);
  return Explain(status, absl::StatusCode::kInvalidArgument);
}

}  // namespace verity
