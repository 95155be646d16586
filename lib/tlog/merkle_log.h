// The append-only Merkle log of RFC 6962 (RFC 9162 section 2.1): leaf and node
// hashes, the tree hash of any prefix, inclusion and consistency proofs made
// from stored subtree hashes, and their verification.
//
// Stateless functions; a HashReader is used by one call at a time.

#ifndef VERITYD_LIB_TLOG_MERKLE_LOG_H_
#define VERITYD_LIB_TLOG_MERKLE_LOG_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace verity::tlog {

inline constexpr size_t kLogHashSize = 32;
using LogHash = std::array<uint8_t, kLogHashSize>;

// SHA-256(0x00 || entry).
LogHash LeafHash(absl::string_view entry);
// SHA-256(0x01 || left || right).
LogHash NodeHash(const LogHash& left, const LogHash& right);
// The hash of the tree of no entries: SHA-256 of nothing.
LogHash EmptyTreeHash();

// Standard base64 of the 32 bytes, and back (exactly 32 bytes, or
// INVALID_ARGUMENT).
std::string LogHashToBase64(const LogHash& hash);
absl::StatusOr<LogHash> LogHashFromBase64(absl::string_view text);

// A hash as a proof carries it on the wire (the raw 32 bytes), and back:
// DATA_LOSS for bytes of another length.
std::string LogHashToBytes(const LogHash& hash);
absl::StatusOr<LogHash> LogHashFromBytes(absl::string_view bytes);

// LogHashFromBytes of each of `all` (strings), in order.
template <typename Strings>
absl::StatusOr<std::vector<LogHash>> LogHashesFromBytes(const Strings& all) {
  std::vector<LogHash> hashes;
  for (const auto& bytes : all) {
    absl::StatusOr<LogHash> hash = LogHashFromBytes(bytes);
    if (!hash.ok()) return hash.status();
    hashes.push_back(*hash);
  }
  return hashes;
}

// The hash of a complete subtree: the 2^level entries from index << level.
struct SubtreeIndex {
  int level = 0;
  uint64_t index = 0;
};

// Reads stored hashes of complete subtrees (the log's tiles, or memory).
class HashReader {
 public:
  virtual ~HashReader() = default;
  virtual absl::StatusOr<LogHash> Read(SubtreeIndex subtree) = 0;
};

// The tree hash of entries [0, size).
absl::StatusOr<LogHash> TreeHash(uint64_t size, HashReader& reader);

// RFC 6962 PATH(index, D[0:size]): sibling hashes from the leaf up.
// INVALID_ARGUMENT unless index < size.
absl::StatusOr<std::vector<LogHash>> InclusionProof(uint64_t index,
                                                    uint64_t size,
                                                    HashReader& reader);

// RFC 6962 PROOF(old_size, D[0:size]). INVALID_ARGUMENT unless
// 0 < old_size <= size (no proof is needed from the empty tree).
absl::StatusOr<std::vector<LogHash>> ConsistencyProof(uint64_t old_size,
                                                      uint64_t size,
                                                      HashReader& reader);

// RFC 9162 2.1.3.2: OK if `proof` proves `leaf` at `index` in the tree of
// `size` entries whose hash is `root`; DATA_LOSS if it does not.
absl::Status VerifyInclusion(uint64_t index, uint64_t size, const LogHash& leaf,
                             absl::Span<const LogHash> proof,
                             const LogHash& root);

// RFC 9162 2.1.4.2: OK if `proof` proves that the tree of `size` entries with
// hash `root` extends the one of `old_size` entries with `old_root`;
// DATA_LOSS if it does not.
absl::Status VerifyConsistency(uint64_t old_size, uint64_t size,
                               const LogHash& old_root, const LogHash& root,
                               absl::Span<const LogHash> proof);

}  // namespace verity::tlog

#endif  // VERITYD_LIB_TLOG_MERKLE_LOG_H_
