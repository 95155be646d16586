// The hash algorithms fs-verity supports and a small copyable wrapper over
// BoringSSL's low-level SHA-2 contexts.

#ifndef VERITYD_LIB_HASH_HASH_H_
#define VERITYD_LIB_HASH_HASH_H_

#include <openssl/sha.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/base/bytes.h"

namespace verity {

// Values are the fs-verity on-disk algorithm numbers (FS_VERITY_HASH_ALG_*).
enum class HashAlgorithm : uint8_t { kSha256 = 1, kSha512 = 2 };

// The largest digest of any supported algorithm (SHA-512).
inline constexpr size_t kMaxDigestSize = 64;

// Accepts the names `fsverity digest --hash-alg` accepts: "sha256", "sha512".
absl::StatusOr<HashAlgorithm> ParseHashAlgorithm(absl::string_view name);

// Returns "sha256" or "sha512"; "unknown" for values outside the enum.
absl::string_view HashAlgorithmName(HashAlgorithm algorithm);

// Returns true if `value` is the number of a supported algorithm.
bool IsValidHashAlgorithm(uint8_t value);

// Digest size in bytes: 32 or 64.
size_t DigestSize(HashAlgorithm algorithm);

// Input block size of the compression function: 64 or 128. fs-verity pads
// the salt to this so that the salted state can be computed once.
size_t HashBlockSize(HashAlgorithm algorithm);

// An incremental hash. Copying a Hasher copies its state, which is how a
// precomputed prefix (the salt) is reused without rehashing it. Holds no
// heap memory. Thread-compatible: distinct objects may be used concurrently.
class Hasher {
 public:
  // An algorithm outside the enum is treated as SHA-256.
  explicit Hasher(HashAlgorithm algorithm);

  HashAlgorithm algorithm() const { return algorithm_; }
  size_t digest_size() const { return DigestSize(algorithm_); }

  void Update(absl::Span<const uint8_t> data);

  // Writes min(out.size(), digest_size()) digest bytes to `out`. The hasher
  // must not be used afterwards without being reassigned.
  void Finish(absl::Span<uint8_t> out);

 private:
  HashAlgorithm algorithm_;
  union {
    SHA256_CTX sha256;
    SHA512_CTX sha512;
  } ctx_;
};

// One-shot hash of `data`, returned as raw digest bytes.
std::string ComputeHash(HashAlgorithm algorithm,
                        absl::Span<const uint8_t> data);

// The SHA-256 of `bytes` in lowercase hex: a name's file name, a statement
// body's fingerprint, a state file's checksum.
std::string Sha256Hex(absl::string_view bytes);

}  // namespace verity

#endif  // VERITYD_LIB_HASH_HASH_H_
