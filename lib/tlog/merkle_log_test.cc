// The RFC 6962 log: known tree hashes, and every inclusion and consistency
// proof of small trees made, verified, and refused once changed.

#include "lib/tlog/merkle_log.h"

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace verity::tlog {
namespace {

// MTH() as RFC 6962 2.1 defines it, recursively over the entries.
LogHash Mth(const std::vector<std::string>& d, uint64_t lo, uint64_t hi) {
  if (hi == lo) return EmptyTreeHash();
  if (hi - lo == 1) return LeafHash(d[lo]);
  uint64_t k = 1;
  while (k * 2 < hi - lo) k *= 2;
  return NodeHash(Mth(d, lo, lo + k), Mth(d, lo + k, hi));
}

// Stored hashes computed from the entries, counting reads.
class EntryReader final : public HashReader {
 public:
  explicit EntryReader(const std::vector<std::string>& entries)
      : entries_(entries) {}
  absl::StatusOr<LogHash> Read(SubtreeIndex subtree) override {
    ++reads;
    const uint64_t lo = subtree.index << subtree.level;
    const uint64_t hi = lo + (uint64_t{1} << subtree.level);
    if (hi > entries_.size()) return absl::NotFoundError("beyond the log");
    return Mth(entries_, lo, hi);
  }
  int reads = 0;

 private:
  const std::vector<std::string>& entries_;
};

std::string Hex(const LogHash& hash) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(hash.data()), 32));
}

std::vector<std::string> Entries(int n) {
  std::vector<std::string> entries;
  for (int i = 0; i < n; ++i) entries.push_back("entry " + std::to_string(i));
  return entries;
}

TEST(MerkleLogTest, KnownTreeHashes) {
  // The test vectors of RFC 6962's reference implementation.
  const std::vector<std::string> d = {
      "",
      std::string(1, '\0'),
      "\x10",
      "\x20\x21",
      "\x30\x31",
      "\x40\x41\x42\x43",
      "\x50\x51\x52\x53\x54\x55\x56\x57",
      "\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f"};
  const char* roots[] = {
      "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
      "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
      "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
      "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
      "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
      "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
      "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"};
  EntryReader reader(d);
  for (uint64_t n = 1; n <= 8; ++n) {
    absl::StatusOr<LogHash> root = TreeHash(n, reader);
    ASSERT_TRUE(root.ok()) << root.status();
    EXPECT_EQ(Hex(*root), roots[n - 1]) << n;
  }
  EXPECT_EQ(Hex(EmptyTreeHash()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  absl::StatusOr<LogHash> empty = TreeHash(0, reader);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, EmptyTreeHash());
}

TEST(MerkleLogTest, EveryInclusionProofVerifiesAndAChangedOneDoesNot) {
  const std::vector<std::string> d = Entries(70);
  EntryReader reader(d);
  for (uint64_t n = 1; n <= d.size(); ++n) {
    const LogHash root = Mth(d, 0, n);
    ASSERT_EQ(*TreeHash(n, reader), root) << n;
    for (uint64_t m = 0; m < n; ++m) {
      absl::StatusOr<std::vector<LogHash>> proof = InclusionProof(m, n, reader);
      ASSERT_TRUE(proof.ok()) << proof.status();
      const LogHash leaf = LeafHash(d[m]);
      ASSERT_TRUE(VerifyInclusion(m, n, leaf, *proof, root).ok()) << m << n;
      // Another entry, another index, the next tree, a changed, cut or
      // lengthened proof: refused.
      EXPECT_FALSE(VerifyInclusion(m, n, LeafHash("x"), *proof, root).ok());
      if (n > 1) {
        EXPECT_FALSE(VerifyInclusion((m + 1) % n, n, leaf, *proof, root).ok());
      }
      if (n < d.size()) {
        EXPECT_FALSE(
            VerifyInclusion(m, n + 1, leaf, *proof, Mth(d, 0, n + 1)).ok());
      }
      for (size_t i = 0; i < proof->size(); ++i) {
        std::vector<LogHash> changed = *proof;
        changed[i][0] ^= 1;
        EXPECT_FALSE(VerifyInclusion(m, n, leaf, changed, root).ok());
      }
      std::vector<LogHash> longer = *proof;
      longer.push_back(root);
      EXPECT_FALSE(VerifyInclusion(m, n, leaf, longer, root).ok());
      if (!proof->empty()) {
        std::vector<LogHash> shorter(proof->begin(), proof->end() - 1);
        EXPECT_FALSE(VerifyInclusion(m, n, leaf, shorter, root).ok());
      }
    }
  }
}

TEST(MerkleLogTest, EveryConsistencyProofVerifiesAndAChangedOneDoesNot) {
  const std::vector<std::string> d = Entries(70);
  EntryReader reader(d);
  for (uint64_t n = 1; n <= d.size(); ++n) {
    const LogHash root = Mth(d, 0, n);
    for (uint64_t m = 1; m <= n; ++m) {
      const LogHash old_root = Mth(d, 0, m);
      absl::StatusOr<std::vector<LogHash>> proof =
          ConsistencyProof(m, n, reader);
      ASSERT_TRUE(proof.ok()) << proof.status();
      ASSERT_TRUE(VerifyConsistency(m, n, old_root, root, *proof).ok())
          << m << " " << n;
      if (m == n) {
        EXPECT_TRUE(proof->empty());
        continue;
      }
      EXPECT_FALSE(VerifyConsistency(m, n, root, root, *proof).ok());
      EXPECT_FALSE(VerifyConsistency(m, n, old_root, old_root, *proof).ok());
      EXPECT_FALSE(VerifyConsistency(m + 1, n, old_root, root, *proof).ok());
      for (size_t i = 0; i < proof->size(); ++i) {
        std::vector<LogHash> changed = *proof;
        changed[i][31] ^= 0x80;
        EXPECT_FALSE(VerifyConsistency(m, n, old_root, root, changed).ok());
      }
      std::vector<LogHash> shorter(proof->begin(), proof->end() - 1);
      EXPECT_FALSE(VerifyConsistency(m, n, old_root, root, shorter).ok());
      std::vector<LogHash> longer = *proof;
      longer.push_back(root);
      EXPECT_FALSE(VerifyConsistency(m, n, old_root, root, longer).ok());
    }
  }
}

TEST(MerkleLogTest, EdgesOfConsistency) {
  const std::vector<std::string> d = Entries(5);
  EntryReader reader(d);
  const LogHash root = Mth(d, 0, 5);
  // Anything extends the empty tree; one size is consistent only with its
  // own root (two roots of one size are a fork); a tree does not shrink.
  EXPECT_TRUE(VerifyConsistency(0, 5, EmptyTreeHash(), root, {}).ok());
  EXPECT_TRUE(VerifyConsistency(5, 5, root, root, {}).ok());
  absl::Status fork = VerifyConsistency(5, 5, root, Mth(d, 0, 4), {});
  EXPECT_EQ(fork.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(fork.message().find("fork"), std::string::npos) << fork;
  EXPECT_EQ(VerifyConsistency(5, 4, root, root, {}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConsistencyProof(0, 5, reader).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ConsistencyProof(6, 5, reader).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(InclusionProof(5, 5, reader).status().code(),
            absl::StatusCode::kInvalidArgument);
  // A proof reads O(log n) stored hashes.
  const std::vector<std::string> big = Entries(1000);
  EntryReader counted(big);
  ASSERT_TRUE(InclusionProof(777, 1000, counted).ok());
  EXPECT_LE(counted.reads, 2 * 10);
}

TEST(MerkleLogTest, Base64Hashes) {
  const LogHash hash = LeafHash("a");
  absl::StatusOr<LogHash> back = LogHashFromBase64(LogHashToBase64(hash));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, hash);
  EXPECT_FALSE(LogHashFromBase64("AAAA").ok());
  EXPECT_FALSE(LogHashFromBase64(LogHashToBase64(hash) + "=").ok());
  EXPECT_FALSE(LogHashFromBase64("").ok());
}

}  // namespace
}  // namespace verity::tlog
