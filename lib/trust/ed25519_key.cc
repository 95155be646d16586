// Implements Ed25519PublicKey and Ed25519PrivateKey over BoringSSL: PEM
// blocks are split by PEM_read_bio, their DER parsed and written by the EVP
// layer, and signing and verification are ED25519_sign and ED25519_verify.

#include "lib/trust/ed25519_key.h"

#include <openssl/bio.h>
#include <openssl/bytestring.h>
#include <openssl/curve25519.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/mem.h>
#include <openssl/pem.h>

#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"
#include "lib/hash/hash.h"

namespace verity {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using UniquePkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using UniqueBio = std::unique_ptr<BIO, BioFree>;

// One PEM block's label and DER bytes; the bytes are wiped when it goes, as
// they may hold a private key.
struct PemBlock {
  std::string label;
  std::string der;
  ~PemBlock() { OPENSSL_cleanse(der.data(), der.size()); }
};

// Every PEM block of `pem`, in order; text between blocks is skipped.
std::vector<PemBlock> ReadPemBlocks(absl::string_view pem) {
  std::vector<PemBlock> blocks;
  UniqueBio bio(BIO_new_mem_buf(pem.data(), pem.size()));
  char* name = nullptr;
  char* header = nullptr;
  uint8_t* data = nullptr;
  long size = 0;  // NOLINT(runtime/int): PEM_read_bio's type
  while (bio != nullptr &&
         PEM_read_bio(bio.get(), &name, &header, &data, &size) == 1) {
    blocks.push_back({name, std::string(reinterpret_cast<char*>(data),
                                        static_cast<size_t>(size))});
    OPENSSL_cleanse(data, static_cast<size_t>(size));
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
  }
  ERR_clear_error();  // the end of input is reported as an error
  return blocks;
}

// A BIO's contents as a string.
std::string BioContents(BIO* bio) {
  const uint8_t* contents = nullptr;
  size_t size = 0;
  BIO_mem_contents(bio, &contents, &size);
  return std::string(reinterpret_cast<const char*>(contents), size);
}

// Parses DER bytes with `parse` (EVP_parse_public_key or
// EVP_parse_private_key); null unless it is exactly one Ed25519 key.
UniquePkey ParseEd25519(absl::string_view der, EVP_PKEY* (*parse)(CBS*)) {
  CBS cbs;
  CBS_init(&cbs, reinterpret_cast<const uint8_t*>(der.data()), der.size());
  UniquePkey key(parse(&cbs));
  ERR_clear_error();
  if (key == nullptr || CBS_len(&cbs) != 0 ||
      EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519) {
    return nullptr;
  }
  return key;
}

KeyId KeyIdOf(const std::array<uint8_t, kEd25519PublicKeySize>& raw) {
  UniquePkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                             raw.data(), raw.size()));
  CBB cbb;
  uint8_t* der = nullptr;
  size_t der_size = 0;
  // Cannot fail for a valid 32-byte key but for memory; abort then, as a
  // wrong id would.
  if (key == nullptr || !CBB_init(&cbb, 64) ||
      !EVP_marshal_public_key(&cbb, key.get()) ||
      !CBB_finish(&cbb, &der, &der_size)) {
    abort();
  }
  const std::string digest = ComputeHash(
      HashAlgorithm::kSha256, absl::Span<const uint8_t>(der, der_size));
  OPENSSL_free(der);
  KeyId id;
  std::memcpy(id.data(), digest.data(), id.size());
  return id;
}

}  // namespace

std::string KeyIdToHex(const KeyId& id) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(id.data()), id.size()));
}

Ed25519PublicKey::Ed25519PublicKey(const std::array<uint8_t, 32>& raw)
    : raw_(raw), id_(KeyIdOf(raw)) {}

absl::StatusOr<std::vector<Ed25519PublicKey>> Ed25519PublicKey::ParsePem(
    absl::string_view pem) {
  std::vector<Ed25519PublicKey> keys;
  for (const PemBlock& block : ReadPemBlocks(pem)) {
    if (block.label != "PUBLIC KEY") continue;
    UniquePkey key = ParseEd25519(block.der, EVP_parse_public_key);
    if (key == nullptr) {
      return absl::InvalidArgumentError(
          "a PUBLIC KEY block is not an Ed25519 key");
    }
    std::array<uint8_t, kEd25519PublicKeySize> raw;
    size_t size = raw.size();
    if (!EVP_PKEY_get_raw_public_key(key.get(), raw.data(), &size) ||
        size != raw.size()) {
      return absl::InvalidArgumentError("an Ed25519 public key is malformed");
    }
    keys.push_back(Ed25519PublicKey(raw));
  }
  if (keys.empty()) {
    return absl::InvalidArgumentError(
        "no PUBLIC KEY block (write one with `openssl pkey -pubout`)");
  }
  return keys;
}

absl::StatusOr<Ed25519PublicKey> Ed25519PublicKey::FromRaw(
    absl::string_view raw) {
  if (raw.size() != kEd25519PublicKeySize) {
    return absl::InvalidArgumentError("an Ed25519 public key is 32 bytes");
  }
  std::array<uint8_t, kEd25519PublicKeySize> bytes;
  std::memcpy(bytes.data(), raw.data(), bytes.size());
  return Ed25519PublicKey(bytes);
}

std::string Ed25519PublicKey::ToPem() const {
  UniquePkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                             raw_.data(), raw_.size()));
  UniqueBio bio(BIO_new(BIO_s_mem()));
  if (key == nullptr || bio == nullptr ||
      !PEM_write_bio_PUBKEY(bio.get(), key.get())) {
    abort();  // only out of memory
  }
  return BioContents(bio.get());
}

bool Ed25519PublicKey::Verify(absl::string_view message,
                              absl::string_view signature) const {
  return signature.size() == kEd25519SignatureSize &&
         ED25519_verify(reinterpret_cast<const uint8_t*>(message.data()),
                        message.size(),
                        reinterpret_cast<const uint8_t*>(signature.data()),
                        raw_.data()) == 1;
}

Ed25519PrivateKey::Ed25519PrivateKey(const std::array<uint8_t, 64>& key,
                                     Ed25519PublicKey public_key)
    : key_(key), public_key_(std::move(public_key)) {}

Ed25519PrivateKey::Ed25519PrivateKey(Ed25519PrivateKey&& other) noexcept
    : key_(other.key_), public_key_(other.public_key_) {
  OPENSSL_cleanse(other.key_.data(), other.key_.size());
}

Ed25519PrivateKey& Ed25519PrivateKey::operator=(
    Ed25519PrivateKey&& other) noexcept {
  key_ = other.key_;
  public_key_ = other.public_key_;
  OPENSSL_cleanse(other.key_.data(), other.key_.size());
  return *this;
}

Ed25519PrivateKey::~Ed25519PrivateKey() {
  OPENSSL_cleanse(key_.data(), key_.size());
}

Ed25519PrivateKey Ed25519PrivateKey::Generate() {
  std::array<uint8_t, kEd25519PublicKeySize> public_key;
  std::array<uint8_t, 64> key;
  ED25519_keypair(public_key.data(), key.data());
  Ed25519PrivateKey result(key, Ed25519PublicKey(public_key));
  OPENSSL_cleanse(key.data(), key.size());
  return result;
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::FromSeed(
    absl::string_view seed) {
  if (seed.size() != 32) {
    return absl::InvalidArgumentError("an Ed25519 seed is 32 bytes");
  }
  std::array<uint8_t, kEd25519PublicKeySize> public_key;
  std::array<uint8_t, 64> expanded;
  ED25519_keypair_from_seed(public_key.data(), expanded.data(),
                            reinterpret_cast<const uint8_t*>(seed.data()));
  Ed25519PrivateKey result(expanded, Ed25519PublicKey(public_key));
  OPENSSL_cleanse(expanded.data(), expanded.size());
  return result;
}

absl::StatusOr<Ed25519PrivateKey> Ed25519PrivateKey::ParsePem(
    absl::string_view pem) {
  for (const PemBlock& block : ReadPemBlocks(pem)) {
    if (block.label != "PRIVATE KEY") continue;
    UniquePkey key = ParseEd25519(block.der, EVP_parse_private_key);
    std::array<uint8_t, 32> seed;
    size_t size = seed.size();
    if (key == nullptr ||
        !EVP_PKEY_get_raw_private_key(key.get(), seed.data(), &size) ||
        size != seed.size()) {
      return absl::InvalidArgumentError(
          "the PRIVATE KEY block is not an Ed25519 key");
    }
    absl::StatusOr<Ed25519PrivateKey> result = FromSeed(absl::string_view(
        reinterpret_cast<const char*>(seed.data()), seed.size()));
    OPENSSL_cleanse(seed.data(), seed.size());
    return result;
  }
  return absl::InvalidArgumentError(
      "no unencrypted PRIVATE KEY block (write one with `openssl genpkey "
      "-algorithm ed25519` or `verity keygen`)");
}

std::string Ed25519PrivateKey::ToPem() const {
  // The first 32 bytes of BoringSSL's form are the seed, which is what
  // PKCS#8 holds (RFC 8410).
  UniquePkey key(
      EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, key_.data(), 32));
  UniqueBio bio(BIO_new(BIO_s_mem()));
  if (key == nullptr || bio == nullptr ||
      !PEM_write_bio_PKCS8PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0,
                                     nullptr, nullptr)) {
    abort();  // only out of memory
  }
  return BioContents(bio.get());
}

std::string Ed25519PrivateKey::Sign(absl::string_view message) const {
  std::string signature(kEd25519SignatureSize, '\0');
  ED25519_sign(reinterpret_cast<uint8_t*>(signature.data()),
               reinterpret_cast<const uint8_t*>(message.data()), message.size(),
               key_.data());
  return signature;
}

}  // namespace verity
