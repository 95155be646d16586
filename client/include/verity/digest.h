// The fs-verity digest a caller trusts: the SDK proves every byte it releases
// against one, so it is the only thing an application has to get right.

#ifndef VERITYD_CLIENT_INCLUDE_VERITY_DIGEST_H_
#define VERITYD_CLIENT_INCLUDE_VERITY_DIGEST_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace verity::sdk {

// fs-verity's hash algorithm numbers (FS_VERITY_HASH_ALG_*).
enum class DigestAlgorithm : uint8_t { kSha256 = 1, kSha512 = 2 };

// The Linux verity format of a blob's tree: fs-verity's (`fsverity digest`)
// or dm-verity's (`veritysetup format`, format 1).
enum class TreeFormat : uint8_t { kFsVerity = 0, kDmVerity = 1 };

// A dm-verity image's trust anchor: its root hash and the parameters
// `veritysetup format` built it with, as it prints them (format 1; verityd
// stores images whose data and hash block sizes are equal). Plain value.
struct DmVerityRoot {
  DigestAlgorithm hash_algorithm = DigestAlgorithm::kSha256;
  uint32_t data_block_size = 4096;
  uint32_t hash_block_size = 4096;
  std::string salt;  // raw bytes; empty for none
  uint64_t data_blocks = 0;
  std::string root_hash;  // raw bytes
};

// A blob's digest: the hash of its fs-verity descriptor, as `fsverity digest`
// prints it, or of a dm-verity blob's parameters and root hash (OfDmVerity).
// Immutable value; thread-safe; copy freely.
class Digest {
 public:
  // Parses "sha256:<64 hex digits>" or "sha512:<128 hex digits>" (either
  // case); INVALID_ARGUMENT otherwise.
  static absl::StatusOr<Digest> Parse(absl::string_view text);

  // From raw digest bytes; INVALID_ARGUMENT unless `raw` has the algorithm's
  // digest size (32 or 64 bytes).
  static absl::StatusOr<Digest> FromBytes(DigestAlgorithm algorithm,
                                          absl::string_view raw);

  // The digest of the dm-verity blob `root` describes: fetching it proves
  // every byte against `root`. INVALID_ARGUMENT for parameters verityd does
  // not store (unequal block sizes, no data block) or a root hash of the
  // wrong size.
  static absl::StatusOr<Digest> OfDmVerity(const DmVerityRoot& root);

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

// OK iff `roothash_p7s`, a dm-verity root hash signature as systemd's
// roothash.p7s holds it (DER PKCS#7, detached, over the root hash in
// lowercase hex, as `openssl smime -sign -nocerts -noattr -binary` makes it
// and the kernel's dm-verity checks it), verifies with one of the
// certificates in `pinned_pem`. DATA_LOSS saying why otherwise;
// INVALID_ARGUMENT if `pinned_pem` holds no certificate; FAILED_PRECONDITION
// if the system's OpenSSL 3 (libcrypto.so.3) cannot be loaded.
absl::Status VerifyRootHashSignature(const DmVerityRoot& root,
                                     absl::string_view roothash_p7s,
                                     absl::string_view pinned_pem);

}  // namespace verity::sdk

#endif  // VERITYD_CLIENT_INCLUDE_VERITY_DIGEST_H_
