// Implements the RFC 6962 log hashes, proofs and their verification.

#include "lib/tlog/merkle_log.h"

#include <openssl/sha.h>

#include <algorithm>
#include <utility>

#include "absl/numeric/bits.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace verity::tlog {
namespace {

LogHash Sha256Of(uint8_t prefix, absl::string_view a, absl::string_view b) {
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, &prefix, 1);
  SHA256_Update(&ctx, a.data(), a.size());
  SHA256_Update(&ctx, b.data(), b.size());
  LogHash out;
  SHA256_Final(out.data(), &ctx);
  return out;
}

absl::string_view View(const LogHash& hash) {
  return absl::string_view(reinterpret_cast<const char*>(hash.data()),
                           hash.size());
}

// The largest power of two smaller than n (n > 1): RFC 6962's k.
uint64_t SplitPoint(uint64_t n) {
  return uint64_t{1} << (absl::bit_width(n - 1) - 1);
}

// MTH(D[lo:hi]) for a range the RFC's recursion makes: lo is a multiple of
// the largest power of two not above hi - lo, so the range splits into
// complete subtrees the reader has.
absl::StatusOr<LogHash> RangeHash(uint64_t lo, uint64_t hi,
                                  HashReader& reader) {
  const uint64_t n = hi - lo;
  if (absl::has_single_bit(n)) {
    const int level = absl::countr_zero(n);
    if (lo % n != 0) {
      return absl::InternalError(
          absl::StrCat("unaligned subtree [", lo, ", ", hi, ")"));
    }
    return reader.Read({level, lo >> level});
  }
  const uint64_t k = SplitPoint(n);
  ASSIGN_OR_RETURN(LogHash left, RangeHash(lo, lo + k, reader));
  ASSIGN_OR_RETURN(LogHash right, RangeHash(lo + k, hi, reader));
  return NodeHash(left, right);
}

// RFC 9162's "right-shift fn and sn equally until either LSB(fn) is set or
// fn is 0": up the levels where the node is the last of its level, with no
// right sibling, and so goes up unhashed.
void SkipLeftEdges(uint64_t& fn, uint64_t& sn) {
  while ((fn & 1) == 0 && fn != 0) {
    fn >>= 1;
    sn >>= 1;
  }
}

absl::Status ProofMismatch(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("the ", what, " does not verify"));
}

}  // namespace

LogHash LeafHash(absl::string_view entry) { return Sha256Of(0, entry, ""); }

LogHash NodeHash(const LogHash& left, const LogHash& right) {
  return Sha256Of(1, View(left), View(right));
}

LogHash EmptyTreeHash() {
  LogHash out;
  SHA256(nullptr, 0, out.data());
  return out;
}

std::string LogHashToBase64(const LogHash& hash) {
  return absl::Base64Escape(View(hash));
}

absl::StatusOr<LogHash> LogHashFromBase64(absl::string_view text) {
  std::string bytes;
  if (!absl::Base64Unescape(text, &bytes) || bytes.size() != kLogHashSize ||
      absl::Base64Escape(bytes) != text) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a base64 SHA-256 hash: \"", absl::CHexEscape(text), "\""));
  }
  LogHash hash;
  std::copy(bytes.begin(), bytes.end(), hash.begin());
  return hash;
}

std::string LogHashToBytes(const LogHash& hash) {
  return std::string(hash.begin(), hash.end());
}

absl::StatusOr<LogHash> LogHashFromBytes(absl::string_view bytes) {
  if (bytes.size() != kLogHashSize) {
    return absl::DataLossError(absl::StrCat("a proof hash of ", bytes.size(),
                                            " bytes, not ", kLogHashSize));
  }
  LogHash hash;
  std::copy(bytes.begin(), bytes.end(), hash.begin());
  return hash;
}

absl::StatusOr<LogHash> TreeHash(uint64_t size, HashReader& reader) {
  if (size == 0) return EmptyTreeHash();
  return RangeHash(0, size, reader);
}

absl::StatusOr<std::vector<LogHash>> InclusionProof(uint64_t index,
                                                    uint64_t size,
                                                    HashReader& reader) {
  if (index >= size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entry ", index, " is not in the tree of ", size, " entries"));
  }
  // PATH(m, D[lo:hi]) from the root down; the proof lists it leaf first.
  std::vector<LogHash> proof;
  uint64_t lo = 0, hi = size;
  while (hi - lo > 1) {
    const uint64_t k = SplitPoint(hi - lo);
    if (index < lo + k) {
      ASSIGN_OR_RETURN(proof.emplace_back(), RangeHash(lo + k, hi, reader));
      hi = lo + k;
    } else {
      ASSIGN_OR_RETURN(proof.emplace_back(), RangeHash(lo, lo + k, reader));
      lo += k;
    }
  }
  std::reverse(proof.begin(), proof.end());
  return proof;
}

absl::StatusOr<std::vector<LogHash>> ConsistencyProof(uint64_t old_size,
                                                      uint64_t size,
                                                      HashReader& reader) {
  if (old_size == 0 || old_size > size) {
    return absl::InvalidArgumentError(
        absl::StrCat("no consistency proof from ", old_size, " to ", size,
                     " entries (0 < old size <= size)"));
  }
  // SUBPROOF(m, D[lo:hi], whole) from the root down; listed leaf first.
  std::vector<LogHash> proof;
  uint64_t lo = 0, hi = size, m = old_size;
  bool whole = true;  // b: D[lo:hi] is still the old tree's root path
  while (m != hi - lo) {
    const uint64_t k = SplitPoint(hi - lo);
    if (m <= k) {
      ASSIGN_OR_RETURN(proof.emplace_back(), RangeHash(lo + k, hi, reader));
      hi = lo + k;
    } else {
      ASSIGN_OR_RETURN(proof.emplace_back(), RangeHash(lo, lo + k, reader));
      m -= k;
      lo += k;
      whole = false;
    }
  }
  if (!whole) {
    ASSIGN_OR_RETURN(proof.emplace_back(), RangeHash(lo, hi, reader));
  }
  std::reverse(proof.begin(), proof.end());
  return proof;
}

absl::Status VerifyInclusion(uint64_t index, uint64_t size, const LogHash& leaf,
                             absl::Span<const LogHash> proof,
                             const LogHash& root) {
  if (index >= size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "entry ", index, " is not in the tree of ", size, " entries"));
  }
  uint64_t fn = index, sn = size - 1;
  LogHash r = leaf;
  for (const LogHash& p : proof) {
    if (sn == 0) return ProofMismatch("inclusion proof (too long)");
    if ((fn & 1) != 0 || fn == sn) {
      r = NodeHash(p, r);
      SkipLeftEdges(fn, sn);
    } else {
      r = NodeHash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return ProofMismatch("inclusion proof (too short)");
  if (r != root) return ProofMismatch("inclusion proof");
  return absl::OkStatus();
}

absl::Status VerifyConsistency(uint64_t old_size, uint64_t size,
                               const LogHash& old_root, const LogHash& root,
                               absl::Span<const LogHash> proof) {
  if (old_size > size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a tree of ", size, " entries cannot extend one of ", old_size));
  }
  if (old_size == size) {
    if (!proof.empty()) return ProofMismatch("consistency proof (not empty)");
    if (old_root != root) return ProofMismatch("consistency proof (fork)");
    return absl::OkStatus();
  }
  if (old_size == 0) {
    if (!proof.empty()) return ProofMismatch("consistency proof (not empty)");
    return absl::OkStatus();
  }
  if (proof.empty()) return ProofMismatch("consistency proof (empty)");
  // Step 2: an old tree that is a complete subtree is the proof's first node.
  std::vector<LogHash> path;
  if (absl::has_single_bit(old_size)) path.push_back(old_root);
  path.insert(path.end(), proof.begin(), proof.end());
  uint64_t fn = old_size - 1, sn = size - 1;
  while ((fn & 1) != 0) {
    fn >>= 1;
    sn >>= 1;
  }
  LogHash fr = path[0], sr = path[0];
  for (size_t i = 1; i < path.size(); ++i) {
    const LogHash& c = path[i];
    if (sn == 0) return ProofMismatch("consistency proof (too long)");
    if ((fn & 1) != 0 || fn == sn) {
      fr = NodeHash(c, fr);
      sr = NodeHash(c, sr);
      SkipLeftEdges(fn, sn);
    } else {
      sr = NodeHash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) return ProofMismatch("consistency proof (too short)");
  if (fr != old_root || sr != root) return ProofMismatch("consistency proof");
  return absl::OkStatus();
}

}  // namespace verity::tlog
