// The descriptor whose hash is a blob's digest: fs-verity's (the file digest
// `fsverity digest` prints) or, for a dm-verity tree, its superblock and root
// hash; and the "sha256:<hex>" text form of digests.

#ifndef VERITYD_LIB_TREE_DESCRIPTOR_H_
#define VERITYD_LIB_TREE_DESCRIPTOR_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/hash/hash.h"
#include "lib/tree/dm_verity.h"
#include "lib/tree/merkle_params.h"

namespace verity {

// Size of the serialized struct fsverity_descriptor.
inline constexpr size_t kDescriptorSize = 256;
// The largest serialized descriptor of either format: a dm-verity superblock
// and a SHA-512 root hash.
inline constexpr size_t kMaxDescriptorSize =
    kDmVeritySuperblockSize + kMaxDigestSize;

// The fields of struct fsverity_descriptor that vary (version is 1 and
// there is no signature), and the tree's format. Plain value; copy freely.
//
// A dm-verity blob's descriptor is its dm-verity parameters and root hash:
// what a `veritysetup format` user trusts. It serializes as the 512-byte
// superblock veritysetup writes (format 1, both block sizes the block size,
// data blocks data_size / block size, the salt, a zero UUID) followed by the
// root hash, and its hash is the blob's digest, so that the digest commits to
// the size and the salt, which the root hash alone does not.
struct Descriptor {
  HashAlgorithm hash_algorithm = HashAlgorithm::kSha256;
  uint8_t log_block_size = 12;
  std::string salt;  // at most 32 bytes; empty if unsalted
  uint64_t data_size = 0;
  std::string root_hash;  // exactly DigestSize(hash_algorithm) bytes
  TreeFormat format = TreeFormat::kFsVerity;

  // The exact 256 bytes fs-verity hashes, or a dm-verity descriptor's 512 +
  // digest-size bytes; INVALID_ARGUMENT if a field does not fit the format.
  absl::StatusOr<std::string> Serialize() const;

  // The raw file digest: the hash of Serialize().
  absl::StatusOr<std::string> ComputeFileDigest() const;

  // Equal descriptors serialize, and so hash, alike: a descriptor equal to
  // one already authenticated is authentic.
  friend bool operator==(const Descriptor& a, const Descriptor& b) {
    return a.hash_algorithm == b.hash_algorithm &&
           a.log_block_size == b.log_block_size && a.salt == b.salt &&
           a.data_size == b.data_size && a.root_hash == b.root_hash &&
           a.format == b.format;
  }
  friend bool operator!=(const Descriptor& a, const Descriptor& b) {
    return !(a == b);
  }
};

// A dm-verity blob's descriptor: `data_blocks` blocks of `params` (which
// must be of a kind MerkleParamsOf takes) under `root_hash`. INVALID_ARGUMENT
// as MerkleParamsOf, or if the size overflows; the root hash's size is checked
// when the descriptor is hashed.
absl::StatusOr<Descriptor> DmVerityDescriptorOf(const DmVerityParams& params,
                                                uint64_t data_blocks,
                                                std::string root_hash);

// The tree parameters a descriptor names; INVALID_ARGUMENT unless they pass
// ValidateMerkleParams (a known algorithm, a power-of-two block size from
// twice the digest size to kMaxBlockSize, a salt of at most 32 bytes).
absl::StatusOr<MerkleParams> ParamsOf(const Descriptor& descriptor);

// The layout of the tree a descriptor describes; INVALID_ARGUMENT as
// ParamsOf() and TreeGeometry::Create().
absl::StatusOr<TreeGeometry> GeometryOf(const Descriptor& descriptor);

// Parses what Serialize() writes, of either format; INVALID_ARGUMENT unless
// `bytes` is exactly such a serialization (fs-verity: version 1, no
// signature, zero padding).
absl::StatusOr<Descriptor> ParseDescriptor(absl::Span<const uint8_t> bytes);

// Formats as `fsverity digest` prints: "sha256:" + lowercase hex. `digest`
// is raw bytes.
std::string FormatDigest(HashAlgorithm algorithm,
                         absl::Span<const uint8_t> digest);

// A digest as FormatDigest prints it ("sha256:<hex>") made a plain file name
// ("sha256-<hex>"): what the caches and the versioned folders name files by.
std::string DigestFileName(absl::string_view digest);

// A file digest: the algorithm and the raw hash of the descriptor. What the
// store, the caches and the verifiers key on and compare. Plain value.
struct ParsedDigest {
  HashAlgorithm algorithm = HashAlgorithm::kSha256;
  std::string digest;  // raw bytes

  // As `fsverity digest` prints it: FormatDigest(algorithm, digest).
  std::string ToString() const;

  friend bool operator==(const ParsedDigest& a, const ParsedDigest& b) {
    return a.algorithm == b.algorithm && a.digest == b.digest;
  }
  friend bool operator!=(const ParsedDigest& a, const ParsedDigest& b) {
    return !(a == b);
  }
  template <typename H>
  friend H AbslHashValue(H h, const ParsedDigest& d) {
    return H::combine(std::move(h), d.algorithm, d.digest);
  }
};

// The key of shared entries that have a digest() (VerifiedTree, the server's
// blobs), for LruCache.
template <typename T>
struct DigestKeyOf {
  using Key = ParsedDigest;
  const ParsedDigest& operator()(const T& entry) const {
    return entry.digest();
  }
};

// Parses the output of FormatDigest (hex of either case); INVALID_ARGUMENT
// if the algorithm is unknown or the hex is malformed or the wrong length.
absl::StatusOr<ParsedDigest> ParseDigest(absl::string_view text);

}  // namespace verity

#endif  // VERITYD_LIB_TREE_DESCRIPTOR_H_
