// The fs-verity digest a caller trusts: the SDK proves every byte it releases
// against one, so it is the only thing an application has to get right.

#ifndef VERITYD_CLIENT_INCLUDE_VERITY_DIGEST_H_
#define VERITYD_CLIENT_INCLUDE_VERITY_DIGEST_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::sdk {

// fs-verity's hash algorithm numbers (FS_VERITY_HASH_ALG_*).
enum class DigestAlgorithm : uint8_t { kSha256 = 1, kSha512 = 2 };

// A blob's digest: the hash of its fs-verity descriptor, as `fsverity digest`
// prints it. Immutable value; thread-safe; copy freely.
class Digest {
 public:
  // Parses "sha256:<64 hex digits>" or "sha512:<128 hex digits>" (either
  // case); INVALID_ARGUMENT otherwise.
  static absl::StatusOr<Digest> Parse(absl::string_view text);

  // From raw digest bytes; INVALID_ARGUMENT unless `raw` has the algorithm's
  // digest size (32 or 64 bytes).
  static absl::StatusOr<Digest> FromBytes(DigestAlgorithm algorithm,
                                          absl::string_view raw);

  DigestAlgorithm algorithm() const { return algorithm_; }
  // The raw digest bytes.
  const std::string& bytes() const { return bytes_; }
  // "sha256:" + lowercase hex, as `fsverity digest` prints it.
  std::string ToString() const;

  friend bool operator==(const Digest& a, const Digest& b) {
    return a.algorithm_ == b.algorithm_ && a.bytes_ == b.bytes_;
  }
  friend bool operator!=(const Digest& a, const Digest& b) { return !(a == b); }

 private:
  Digest(DigestAlgorithm algorithm, std::string bytes)
      : algorithm_(algorithm), bytes_(std::move(bytes)) {}

  DigestAlgorithm algorithm_;
  std::string bytes_;
};

}  // namespace verity::sdk

#endif  // VERITYD_CLIENT_INCLUDE_VERITY_DIGEST_H_
