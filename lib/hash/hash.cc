// Implements the hash algorithm helpers and Hasher over BoringSSL's SHA-2.

#include "lib/hash/hash.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace verity {

absl::StatusOr<HashAlgorithm> ParseHashAlgorithm(absl::string_view name) {
  if (name == "sha256") return HashAlgorithm::kSha256;
  if (name == "sha512") return HashAlgorithm::kSha512;
  // Quote at most a short, escaped prefix: `name` may be hostile.
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown hash algorithm \"", absl::CHexEscape(name.substr(0, 16)),
      name.size() > 16 ? "...\"" : "\"", " (expected sha256 or sha512)"));
}

absl::string_view HashAlgorithmName(HashAlgorithm algorithm) {
  switch (algorithm) {
    case HashAlgorithm::kSha256:
      return "sha256";
    case HashAlgorithm::kSha512:
      return "sha512";
  }
  return "unknown";
}

bool IsValidHashAlgorithm(uint8_t value) {
  return value == static_cast<uint8_t>(HashAlgorithm::kSha256) ||
         value == static_cast<uint8_t>(HashAlgorithm::kSha512);
}

size_t DigestSize(HashAlgorithm algorithm) {
  return algorithm == HashAlgorithm::kSha512 ? SHA512_DIGEST_LENGTH
                                             : SHA256_DIGEST_LENGTH;
}

size_t HashBlockSize(HashAlgorithm algorithm) {
  return algorithm == HashAlgorithm::kSha512 ? SHA512_CBLOCK : SHA256_CBLOCK;
}

Hasher::Hasher(HashAlgorithm algorithm)
    : algorithm_(algorithm == HashAlgorithm::kSha512 ? algorithm
                                                     : HashAlgorithm::kSha256) {
  if (algorithm_ == HashAlgorithm::kSha512) {
    SHA512_Init(&ctx_.sha512);
  } else {
    SHA256_Init(&ctx_.sha256);
  }
}

void Hasher::Update(absl::Span<const uint8_t> data) {
  if (algorithm_ == HashAlgorithm::kSha512) {
    SHA512_Update(&ctx_.sha512, data.data(), data.size());
  } else {
    SHA256_Update(&ctx_.sha256, data.data(), data.size());
  }
}

void Hasher::Finish(absl::Span<uint8_t> out) {
  uint8_t digest[kMaxDigestSize];
  if (algorithm_ == HashAlgorithm::kSha512) {
    SHA512_Final(digest, &ctx_.sha512);
  } else {
    SHA256_Final(digest, &ctx_.sha256);
  }
  std::memcpy(out.data(), digest, std::min(out.size(), digest_size()));
}

std::string ComputeHash(HashAlgorithm algorithm,
                        absl::Span<const uint8_t> data) {
  Hasher hasher(algorithm);
  hasher.Update(data);
  std::string digest(hasher.digest_size(), '\0');
  hasher.Finish(AsMutableBytes(&digest));
  return digest;
}

std::string Sha256Hex(absl::string_view bytes) {
  return absl::BytesToHexString(
      ComputeHash(HashAlgorithm::kSha256, AsBytes(bytes)));
}

}  // namespace verity
