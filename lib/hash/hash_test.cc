// Tests the hash algorithm helpers and Hasher against published vectors.

#include "lib/hash/hash.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace verity {
namespace {

std::string Hex(const std::string& bytes) {
  return absl::BytesToHexString(bytes);
}

// Message from FIPS 180-2 that spans two SHA-256 blocks.
constexpr char kTwoBlocks[] =
    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

TEST(HashTest, Sha256Vectors) {
  EXPECT_EQ(Hex(ComputeHash(HashAlgorithm::kSha256, AsBytes(""))),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hex(ComputeHash(HashAlgorithm::kSha256, AsBytes("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex(ComputeHash(HashAlgorithm::kSha256, AsBytes(kTwoBlocks))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(HashTest, Sha512Vectors) {
  EXPECT_EQ(Hex(ComputeHash(HashAlgorithm::kSha512, AsBytes(""))),
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
            "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e");
  EXPECT_EQ(Hex(ComputeHash(HashAlgorithm::kSha512, AsBytes("abc"))),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
            "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
}

TEST(HashTest, IncrementalMatchesOneShot) {
  for (HashAlgorithm algorithm :
       {HashAlgorithm::kSha256, HashAlgorithm::kSha512}) {
    const std::string data(1000, 'x');
    Hasher hasher(algorithm);
    hasher.Update(AsBytes(absl::string_view(data).substr(0, 1)));
    hasher.Update(AsBytes(absl::string_view(data).substr(1, 300)));
    hasher.Update(AsBytes(absl::string_view(data).substr(301)));
    std::string digest(hasher.digest_size(), '\0');
    hasher.Finish(AsMutableBytes(&digest));
    EXPECT_EQ(digest, ComputeHash(algorithm, AsBytes(data)));
  }
}

TEST(HashTest, CopyingForksTheState) {
  Hasher prefix(HashAlgorithm::kSha256);
  prefix.Update(AsBytes("ab"));
  Hasher copy = prefix;
  copy.Update(AsBytes("c"));
  std::string digest(32, '\0');
  copy.Finish(AsMutableBytes(&digest));
  EXPECT_EQ(digest, ComputeHash(HashAlgorithm::kSha256, AsBytes("abc")));
  prefix.Update(AsBytes("d"));
  prefix.Finish(AsMutableBytes(&digest));
  EXPECT_EQ(digest, ComputeHash(HashAlgorithm::kSha256, AsBytes("abd")));
}

TEST(HashTest, FinishTruncatesToOutputSize) {
  Hasher hasher(HashAlgorithm::kSha512);
  std::string digest(10, '\0');
  hasher.Finish(AsMutableBytes(&digest));
  EXPECT_EQ(digest,
            ComputeHash(HashAlgorithm::kSha512, AsBytes("")).substr(0, 10));
}

TEST(HashTest, Sizes) {
  EXPECT_EQ(DigestSize(HashAlgorithm::kSha256), 32u);
  EXPECT_EQ(DigestSize(HashAlgorithm::kSha512), 64u);
  EXPECT_EQ(HashBlockSize(HashAlgorithm::kSha256), 64u);
  EXPECT_EQ(HashBlockSize(HashAlgorithm::kSha512), 128u);
}

TEST(HashTest, NamesRoundTrip) {
  for (HashAlgorithm algorithm :
       {HashAlgorithm::kSha256, HashAlgorithm::kSha512}) {
    auto parsed = ParseHashAlgorithm(HashAlgorithmName(algorithm));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, algorithm);
  }
  EXPECT_EQ(static_cast<int>(HashAlgorithm::kSha256), 1);
  EXPECT_EQ(static_cast<int>(HashAlgorithm::kSha512), 2);
}

TEST(HashTest, RejectsUnknownNames) {
  for (absl::string_view name : {"", "SHA256", "sha1", "sha256 ", "md5"}) {
    EXPECT_EQ(ParseHashAlgorithm(name).status().code(),
              absl::StatusCode::kInvalidArgument)
        << name;
  }
  const std::string long_name(10000, 'a');
  const absl::Status status = ParseHashAlgorithm(long_name).status();
  EXPECT_LT(status.message().size(), 100u) << "hostile names are truncated";
  EXPECT_EQ(HashAlgorithmName(static_cast<HashAlgorithm>(7)), "unknown");
  EXPECT_FALSE(IsValidHashAlgorithm(0));
  EXPECT_FALSE(IsValidHashAlgorithm(3));
}

}  // namespace
}  // namespace verity
