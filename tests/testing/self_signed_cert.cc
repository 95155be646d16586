// Builds a throwaway self-signed certificate with BoringSSL's X.509 API.
#include "tests/testing/self_signed_cert.h"

#include <openssl/bio.h>
#include <openssl/bytestring.h>
#include <openssl/ec_key.h>
#include <openssl/evp.h>
#include <openssl/nid.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace verity::testing {
namespace {

absl::Status Fail(absl::string_view what) {
  return absl::InternalError(absl::StrCat("self-signed cert: ", what));
}

bssl::UniquePtr<EVP_PKEY> NewP256Key() {
  bssl::UniquePtr<EC_KEY> ec(EC_KEY_new_by_curve_name(NID_X9_62_prime256v1));
  if (!ec || !EC_KEY_generate_key(ec.get())) return nullptr;
  bssl::UniquePtr<EVP_PKEY> key(EVP_PKEY_new());
  if (!key || !EVP_PKEY_assign_EC_KEY(key.get(), ec.release())) return nullptr;
  return key;
}

bool AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  bssl::UniquePtr<X509_EXTENSION> ext(
      X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value));
  return ext && X509_add_ext(cert, ext.get(), -1);
}

bool FillCert(X509* cert, EVP_PKEY* key, absl::string_view common_name) {
  const std::string cn(common_name);
  X509_NAME* name = X509_get_subject_name(cert);
  return X509_set_version(cert, X509_VERSION_3) &&
         ASN1_INTEGER_set(X509_get_serialNumber(cert), 1) &&
         X509_gmtime_adj(X509_getm_notBefore(cert), -3600) &&
         X509_gmtime_adj(X509_getm_notAfter(cert), 86400) &&
         X509_set_pubkey(cert, key) &&
         X509_NAME_add_entry_by_txt(
             name, "CN", MBSTRING_ASC,
             reinterpret_cast<const uint8_t*>(cn.c_str()), -1, -1, 0) &&
         X509_set_issuer_name(cert, name) &&
         AddExtension(cert, NID_basic_constraints, "critical,CA:TRUE") &&
         AddExtension(cert, NID_subject_alt_name,
                      "DNS:localhost,IP:127.0.0.1") &&
         X509_sign(cert, key, EVP_sha256());
}

std::string DrainBio(BIO* bio) {
  const uint8_t* data = nullptr;
  size_t len = 0;
  BIO_mem_contents(bio, &data, &len);
  return std::string(reinterpret_cast<const char*>(data), len);
}

}  // namespace

absl::StatusOr<PemKeyPair> MakeSelfSignedCert(absl::string_view common_name) {
  bssl::UniquePtr<EVP_PKEY> key = NewP256Key();
  if (!key) return Fail("key generation");
  bssl::UniquePtr<X509> cert(X509_new());
  if (!cert || !FillCert(cert.get(), key.get(), common_name))
    return Fail("signing");
  bssl::UniquePtr<BIO> cert_bio(BIO_new(BIO_s_mem()));
  bssl::UniquePtr<BIO> key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio ||
      !PEM_write_bio_X509(cert_bio.get(), cert.get()) ||
      !PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0,
                                nullptr, nullptr)) {
    return Fail("PEM encoding");
  }
  return PemKeyPair{DrainBio(cert_bio.get()), DrainBio(key_bio.get())};
}

}  // namespace verity::testing
