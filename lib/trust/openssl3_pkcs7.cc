// Verifies detached PKCS#7 signatures with the system's libcrypto.so.3.
//
// Why every OpenSSL call goes through a pointer: each verityd binary links
// BoringSSL statically, and BoringSSL defines many of the names needed here
// (d2i_PKCS7, BIO_new_mem_buf, X509_free, OPENSSL_sk_*, ERR_*) but has no
// PKCS7_verify. Calling them directly would let the static linker bind some
// to BoringSSL's copies and the rest to OpenSSL's, handing one library's
// objects to the other. So this file calls none of them: each is looked up by
// dlvsym, by name and version OPENSSL_3.0.0, in the handle of libcrypto.so.3,
// which can only yield OpenSSL's definitions (BoringSSL's are hidden, so not
// in the dynamic symbol table either). This target does not depend on
// @boringssl, so the <openssl/*.h> below are the system's OpenSSL 3 headers
// (the #error checks it); they give types and prototypes only, and
// openssl3_pkcs7_linkage_test checks that the object references none of the
// functions they declare.

#include "lib/trust/openssl3_pkcs7.h"

#include <dlfcn.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

#include <climits>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#if defined(OPENSSL_IS_BORINGSSL) || OPENSSL_VERSION_MAJOR != 3
#error "openssl3_pkcs7.cc must be compiled against the system's OpenSSL 3"
#endif

namespace verity {
namespace {

constexpr char kLibcrypto[] = "libcrypto.so.3";
constexpr char kVersion[] = "OPENSSL_3.0.0";

// One list gives both the pointer's type (the prototype in the OpenSSL 3
// header) and the name looked up, so the two cannot disagree.
#define VERITY_LIBCRYPTO_FUNCTIONS(X) \
  X(BIO_new_mem_buf)                  \
  X(BIO_free)                         \
  X(d2i_PKCS7)                        \
  X(PKCS7_free)                       \
  X(PKCS7_ctrl)                       \
  X(PKCS7_get_signer_info)            \
  X(PKCS7_get0_signers)               \
  X(PKCS7_verify)                     \
  X(OBJ_obj2nid)                      \
  X(PEM_read_bio_X509)                \
  X(X509_free)                        \
  X(OPENSSL_sk_new_null)              \
  X(OPENSSL_sk_push)                  \
  X(OPENSSL_sk_pop)                   \
  X(OPENSSL_sk_num)                   \
  X(OPENSSL_sk_free)                  \
  X(ERR_peek_last_error)              \
  X(ERR_reason_error_string)          \
  X(ERR_clear_error)

// The OpenSSL 3 functions this file uses, as found in libcrypto.so.3.
struct Libcrypto {
#define VERITY_DECLARE(name) decltype(&::name) name = nullptr;
  VERITY_LIBCRYPTO_FUNCTIONS(VERITY_DECLARE)
#undef VERITY_DECLARE
};

template <typename F>
void Find(void* handle, const char* name, F* function, std::string* missing) {
  *function = reinterpret_cast<F>(dlvsym(handle, name, kVersion));
  if (*function == nullptr) absl::StrAppend(missing, " ", name);
}

absl::StatusOr<Libcrypto> Load() {
  // If gRPC has loaded libcrypto.so.3 already, this is that same copy.
  void* handle = dlopen(kLibcrypto, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load ", kLibcrypto,
                     " (OpenSSL 3, Debian package libssl3), which verifies "
                     "PKCS#7 signatures: ",
                     dlerror()));
  }
  Libcrypto lib;
  std::string missing;
#define VERITY_FIND(name) Find(handle, #name, &lib.name, &missing);
  VERITY_LIBCRYPTO_FUNCTIONS(VERITY_FIND)
#undef VERITY_FIND
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        kLibcrypto, " lacks (at version ", kVersion, "):", missing));
  }
  // The handle is never closed, so the pointers stay valid.
  return lib;
}

// Loads libcrypto.so.3 on first use, once per process, and keeps it (never
// destroyed, so usable until exit).
absl::StatusOr<const Libcrypto*> GetLibcrypto() {
  static const absl::StatusOr<Libcrypto>* const lib =
      new absl::StatusOr<Libcrypto>(Load());
  if (!lib->ok()) return lib->status();
  return &**lib;
}

// OpenSSL's reason for the last failure, as " (OpenSSL: ...)", or "".
std::string LastError(const Libcrypto& lib) {
  const char* reason = lib.ERR_reason_error_string(lib.ERR_peek_last_error());
  return reason == nullptr ? "" : absl::StrCat(" (OpenSSL: ", reason, ")");
}

// OpenSSL's error queue is per thread and read by gRPC's TLS code, so each
// entry point starts and ends with it empty.
class ErrorQueueGuard {
 public:
  explicit ErrorQueueGuard(const Libcrypto& lib) : lib_(lib) {
    lib_.ERR_clear_error();
  }
  ErrorQueueGuard(const ErrorQueueGuard&) = delete;
  ErrorQueueGuard& operator=(const ErrorQueueGuard&) = delete;
  ~ErrorQueueGuard() { lib_.ERR_clear_error(); }

 private:
  const Libcrypto& lib_;
};

struct Pkcs7Deleter {
  const Libcrypto* lib;
  void operator()(PKCS7* p7) const { lib->PKCS7_free(p7); }
};
using Pkcs7Ptr = std::unique_ptr<PKCS7, Pkcs7Deleter>;

struct BioDeleter {
  const Libcrypto* lib;
  void operator()(BIO* bio) const { lib->BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

// A read-only memory BIO over `bytes` (not copied).
absl::StatusOr<BioPtr> MemoryBio(const Libcrypto& lib,
                                 absl::string_view bytes) {
  if (bytes.size() > INT_MAX) {
    return absl::InvalidArgumentError("is too large for OpenSSL");
  }
  BIO* bio = lib.BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size()));
  if (bio == nullptr) return absl::ResourceExhaustedError("BIO_new_mem_buf");
  return BioPtr(bio, BioDeleter{&lib});
}

void FreeCertificates(const Libcrypto& lib, OPENSSL_STACK* stack) {
  while (void* cert = lib.OPENSSL_sk_pop(stack)) {
    lib.X509_free(static_cast<X509*>(cert));
  }
  lib.OPENSSL_sk_free(stack);
}

struct CertificatesDeleter {
  const Libcrypto* lib;
  void operator()(OPENSSL_STACK* stack) const { FreeCertificates(*lib, stack); }
};
using CertificatesPtr = std::unique_ptr<OPENSSL_STACK, CertificatesDeleter>;

// Parses `der`, which must be one PKCS#7 and nothing after it.
absl::StatusOr<Pkcs7Ptr> Parse(const Libcrypto& lib, absl::string_view der) {
  if (der.empty()) return absl::InvalidArgumentError("is empty");
  if (der.size() > INT_MAX) {
    return absl::InvalidArgumentError("is too large for OpenSSL");
  }
  const auto* begin = reinterpret_cast<const unsigned char*>(der.data());
  const unsigned char* next = begin;
  PKCS7* p7 = lib.d2i_PKCS7(nullptr, &next, static_cast<long>(der.size()));
  if (p7 == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("is not a DER PKCS#7 SignedData", LastError(lib)));
  }
  Pkcs7Ptr owned(p7, Pkcs7Deleter{&lib});
  const size_t used = static_cast<size_t>(next - begin);
  if (used != der.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("has ", der.size() - used, " bytes after its DER PKCS#7"));
  }
  return owned;
}

// The checks of CheckDetachedPkcs7 on a parsed PKCS#7.
absl::Status CheckShape(const Libcrypto& lib, PKCS7* p7) {
  if (lib.OBJ_obj2nid(p7->type) != NID_pkcs7_signed || p7->d.sign == nullptr) {
    return absl::InvalidArgumentError("is a PKCS#7 but not a SignedData");
  }
  if (lib.PKCS7_ctrl(p7, PKCS7_OP_GET_DETACHED_SIGNATURE, 0, nullptr) != 1) {
    return absl::InvalidArgumentError("is not detached: it carries content");
  }
  const int signers = lib.OPENSSL_sk_num(
      reinterpret_cast<const OPENSSL_STACK*>(lib.PKCS7_get_signer_info(p7)));
  if (signers != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("has ", signers, " signers; exactly one is expected"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Pkcs7Ptr> ParseDetached(const Libcrypto& lib,
                                       absl::string_view der) {
  absl::StatusOr<Pkcs7Ptr> p7 = Parse(lib, der);
  if (!p7.ok()) return p7.status();
  absl::Status shape = CheckShape(lib, p7->get());
  if (!shape.ok()) return shape;
  return p7;
}

// Called after PEM_read_bio_X509 returned null: true if that was the end of
// the input rather than a block that does not parse.
bool IsEndOfPem(const Libcrypto& lib) {
  const unsigned long error = lib.ERR_peek_last_error();
  return ERR_GET_LIB(error) == ERR_LIB_PEM &&
         ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Openssl3Certificates>>
Openssl3Certificates::FromPem(absl::string_view pem) {
  absl::StatusOr<const Libcrypto*> lib = GetLibcrypto();
  if (!lib.ok()) return lib.status();
  const Libcrypto& l = **lib;
  ErrorQueueGuard errors(l);
  absl::StatusOr<BioPtr> bio = MemoryBio(l, pem);
  if (!bio.ok()) return bio.status();
  CertificatesPtr stack(l.OPENSSL_sk_new_null(), CertificatesDeleter{&l});
  if (stack == nullptr) return absl::ResourceExhaustedError("sk_new_null");
  size_t count = 0;
  while (X509* cert =
             l.PEM_read_bio_X509(bio->get(), nullptr, nullptr, nullptr)) {
    if (l.OPENSSL_sk_push(stack.get(), cert) == 0) {
      l.X509_free(cert);
      return absl::ResourceExhaustedError("sk_push");
    }
    ++count;
  }
  if (!IsEndOfPem(l)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PEM certificate ", count + 1, " does not parse", LastError(l)));
  }
  if (count == 0) {
    return absl::InvalidArgumentError("no CERTIFICATE PEM block");
  }
  return std::shared_ptr<const Openssl3Certificates>(
      new Openssl3Certificates(stack.release(), count));
}

Openssl3Certificates::~Openssl3Certificates() {
  // A stack exists only once libcrypto has loaded.
  FreeCertificates(**GetLibcrypto(), static_cast<OPENSSL_STACK*>(stack_));
}

absl::Status CheckDetachedPkcs7(absl::string_view der) {
  absl::StatusOr<const Libcrypto*> lib = GetLibcrypto();
  if (!lib.ok()) return lib.status();
  ErrorQueueGuard errors(**lib);
  return ParseDetached(**lib, der).status();
}

absl::Status VerifyDetachedPkcs7(absl::string_view der,
                                 absl::string_view content,
                                 const Openssl3Certificates& pinned) {
  absl::StatusOr<const Libcrypto*> lib = GetLibcrypto();
  if (!lib.ok()) return lib.status();
  const Libcrypto& l = **lib;
  ErrorQueueGuard errors(l);
  absl::StatusOr<Pkcs7Ptr> p7 = ParseDetached(l, der);
  if (!p7.ok()) return p7.status();
  auto* certs = static_cast<STACK_OF(X509)*>(pinned.stack_);
  // Looked up first, apart from the verification, only to say which failed.
  STACK_OF(X509)* signers =
      l.PKCS7_get0_signers(p7->get(), certs, PKCS7_NOINTERN);
  if (signers == nullptr) {
    return absl::DataLossError(
        absl::StrCat("names a signer that is not among the pinned "
                     "certificates",
                     LastError(l)));
  }
  l.OPENSSL_sk_free(reinterpret_cast<OPENSSL_STACK*>(signers));
  absl::StatusOr<BioPtr> data = MemoryBio(l, content);
  if (!data.ok()) return data.status();
  // NOVERIFY: there is no chain to check, the pinned certificate is trusted
  // as it is. NOINTERN: the signer may only come from `certs`.
  constexpr int kFlags = PKCS7_BINARY | PKCS7_NOINTERN | PKCS7_NOVERIFY;
  if (l.PKCS7_verify(p7->get(), certs, nullptr, data->get(), nullptr, kFlags) !=
      1) {
    return absl::DataLossError(absl::StrCat(
        "does not verify against the pinned certificates", LastError(l)));
  }
  return absl::OkStatus();
}

}  // namespace verity
