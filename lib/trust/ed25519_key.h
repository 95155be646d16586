// Ed25519 keys for signed name statements: PEM in and out as OpenSSL writes
// them (`openssl genpkey -algorithm ed25519`, `openssl pkey -pubout`), and a
// key id derived from the public key. The crypto is BoringSSL's.

#ifndef VERITYD_LIB_TRUST_ED25519_KEY_H_
#define VERITYD_LIB_TRUST_ED25519_KEY_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity {

inline constexpr size_t kEd25519PublicKeySize = 32;
inline constexpr size_t kEd25519SignatureSize = 64;

// SHA-256 of the key's DER SubjectPublicKeyInfo, so that
// `openssl pkey -pubin -in KEY.pub -outform DER | sha256sum` prints it too.
using KeyId = std::array<uint8_t, 32>;

// Lowercase hex, as sha256sum prints it.
std::string KeyIdToHex(const KeyId& id);

class Ed25519PublicKey {
 public:
  // Every "PUBLIC KEY" PEM block in `pem` (text between blocks is ignored).
  // INVALID_ARGUMENT if there is none, or one is not an Ed25519 key.
  static absl::StatusOr<std::vector<Ed25519PublicKey>> ParsePem(
      absl::string_view pem);
  // INVALID_ARGUMENT unless `raw` is 32 bytes.
  static absl::StatusOr<Ed25519PublicKey> FromRaw(absl::string_view raw);

  const std::array<uint8_t, kEd25519PublicKeySize>& raw() const { return raw_; }
  const KeyId& id() const { return id_; }
  // A "PUBLIC KEY" PEM block, as `openssl pkey -pubout` writes it.
  std::string ToPem() const;
  // True iff `signature` is this key's signature of `message`.
  bool Verify(absl::string_view message, absl::string_view signature) const;

 private:
  friend class Ed25519PrivateKey;
  explicit Ed25519PublicKey(const std::array<uint8_t, 32>& raw);

  std::array<uint8_t, kEd25519PublicKeySize> raw_;
  KeyId id_;
};

// A private key; its bytes are wiped when it is destroyed. Move-only.
class Ed25519PrivateKey {
 public:
  static Ed25519PrivateKey Generate();
  // The key RFC 8032 derives from a 32-byte seed (what PKCS#8 stores): for
  // tests and fuzzers that need the same key every run. INVALID_ARGUMENT
  // unless `seed` is 32 bytes.
  static absl::StatusOr<Ed25519PrivateKey> FromSeed(absl::string_view seed);
  // A "PRIVATE KEY" (PKCS#8) PEM block holding an Ed25519 key, as
  // `openssl genpkey -algorithm ed25519` writes it. INVALID_ARGUMENT
  // otherwise; the message never contains key material.
  static absl::StatusOr<Ed25519PrivateKey> ParsePem(absl::string_view pem);

  Ed25519PrivateKey(Ed25519PrivateKey&& other) noexcept;
  Ed25519PrivateKey& operator=(Ed25519PrivateKey&& other) noexcept;
  Ed25519PrivateKey(const Ed25519PrivateKey&) = delete;
  Ed25519PrivateKey& operator=(const Ed25519PrivateKey&) = delete;
  ~Ed25519PrivateKey();

  const Ed25519PublicKey& public_key() const { return public_key_; }
  // The PKCS#8 PEM block ParsePem reads.
  std::string ToPem() const;
  // The 64-byte signature of `message`.
  std::string Sign(absl::string_view message) const;

 private:
  Ed25519PrivateKey(const std::array<uint8_t, 64>& key,
                    Ed25519PublicKey public_key);

  std::array<uint8_t, 64> key_;  // BoringSSL's form: seed || public key
  Ed25519PublicKey public_key_;
};

}  // namespace verity

#endif  // VERITYD_LIB_TRUST_ED25519_KEY_H_
