// Tests descriptor serialization and the digest text format.

#include "lib/tree/descriptor.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/tree/dm_verity.h"

namespace verity {
namespace {

Descriptor SampleDescriptor() {
  Descriptor d;
  d.hash_algorithm = HashAlgorithm::kSha512;
  d.log_block_size = 16;
  d.salt = "salt";
  d.data_size = 0x0102030405060708;
  d.root_hash = std::string(64, '\xab');
  return d;
}

TEST(DescriptorTest, SerializesTheKernelLayout) {
  const absl::StatusOr<std::string> bytes = SampleDescriptor().Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_EQ(bytes->size(), kDescriptorSize);
  EXPECT_EQ((*bytes)[0], 1);                             // version
  EXPECT_EQ((*bytes)[1], 2);                             // SHA-512
  EXPECT_EQ((*bytes)[2], 16);                            // log2(block size)
  EXPECT_EQ((*bytes)[3], 4);                             // salt size
  EXPECT_EQ(bytes->substr(4, 4), std::string(4, '\0'));  // no signature
  EXPECT_EQ(bytes->substr(8, 8), "\x08\x07\x06\x05\x04\x03\x02\x01");
  EXPECT_EQ(bytes->substr(16, 64), std::string(64, '\xab'));
  EXPECT_EQ(bytes->substr(80, 32), "salt" + std::string(28, '\0'));
  EXPECT_EQ(bytes->substr(112), std::string(144, '\0'));
}

TEST(DescriptorTest, EmptyFileDigestMatchesFsverity) {
  Descriptor d;
  d.root_hash = std::string(32, '\0');
  const absl::StatusOr<std::string> digest = d.ComputeFileDigest();
  ASSERT_TRUE(digest.ok()) << digest.status();
  // `fsverity digest` of an empty file with default options.
  EXPECT_EQ(FormatDigest(HashAlgorithm::kSha256, AsBytes(*digest)),
            "sha256:3d248ca542a24fc62d1c43b916eae5016878e2533c88238480b26128"
            "a1f1af95");
}

TEST(DescriptorTest, RejectsFieldsThatDoNotFit) {
  Descriptor d = SampleDescriptor();
  d.root_hash.resize(32);  // SHA-256 size with SHA-512 algorithm
  EXPECT_EQ(d.Serialize().status().code(), absl::StatusCode::kInvalidArgument);
  d = SampleDescriptor();
  d.salt = std::string(33, 's');
  EXPECT_EQ(d.Serialize().status().code(), absl::StatusCode::kInvalidArgument);
  d = SampleDescriptor();
  d.hash_algorithm = static_cast<HashAlgorithm>(0);
  EXPECT_EQ(d.ComputeFileDigest().status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DescriptorTest, ParseInvertsSerialize) {
  const std::string bytes = *SampleDescriptor().Serialize();
  const absl::StatusOr<Descriptor> parsed = ParseDescriptor(AsBytes(bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed->Serialize(), bytes);
  EXPECT_EQ(parsed->salt, "salt");
  EXPECT_EQ(parsed->data_size, 0x0102030405060708u);
}

TEST(DescriptorTest, ParseRejectsAnythingNotCanonical) {
  const std::string good = *SampleDescriptor().Serialize();
  EXPECT_FALSE(ParseDescriptor(AsBytes(good.substr(0, 255))).ok());
  for (size_t at : {size_t{0}, size_t{1}, size_t{3}, size_t{5}, size_t{100},
                    size_t{200}, size_t{255}}) {
    std::string bad = good;
    bad[at] ^= 0x40;  // version, algorithm, salt size, sig size, padding...
    EXPECT_EQ(ParseDescriptor(AsBytes(bad)).status().code(),
              absl::StatusCode::kInvalidArgument)
        << at;
  }
}

TEST(DigestTextTest, RoundTrips) {
  for (HashAlgorithm algorithm :
       {HashAlgorithm::kSha256, HashAlgorithm::kSha512}) {
    std::string bytes;
    for (size_t i = 0; i < DigestSize(algorithm); ++i) {
      bytes.push_back(static_cast<char>(i * 37 + 5));
    }
    const std::string text = FormatDigest(algorithm, AsBytes(bytes));
    EXPECT_EQ(text, absl::StrCat(HashAlgorithmName(algorithm), ":",
                                 absl::BytesToHexString(bytes)));
    const absl::StatusOr<ParsedDigest> parsed = ParseDigest(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->algorithm, algorithm);
    EXPECT_EQ(parsed->digest, bytes);
  }
}

TEST(DigestTextTest, AcceptsUppercaseHex) {
  const absl::StatusOr<ParsedDigest> parsed =
      ParseDigest("sha256:" + std::string(64, 'A'));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->digest, std::string(32, '\xaa'));
}

TEST(DigestTextTest, RejectsMalformedText) {
  const std::string hex64(64, '0');
  for (const std::string& text : {
           std::string(""),
           std::string("sha256"),
           std::string("sha256:"),
           hex64,
           ":" + hex64,
           "md5:" + hex64,
           "SHA256:" + hex64,
           "sha256:" + hex64.substr(1),
           "sha256:" + hex64 + "0",
           "sha256:" + hex64 + "00",
           "sha512:" + hex64,
           "sha256:" + hex64.substr(1) + "g",
           "sha256:" + hex64.substr(1) + " ",
           "sha256: " + hex64.substr(1),
           "sha256:" + hex64.substr(2) + "0x",
           "sha256:" + hex64 + std::string(1, '\0'),
           "sha256::" + hex64,
       }) {
    EXPECT_EQ(ParseDigest(text).status().code(),
              absl::StatusCode::kInvalidArgument)
        << absl::CHexEscape(text);
  }
}

TEST(DigestTextTest, ParsedDigestIsAValue) {
  const std::string text = "sha256:" + std::string(62, '0') + "ab";
  absl::StatusOr<ParsedDigest> digest = ParseDigest(text);
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(digest->ToString(), text);
  ParsedDigest other = *digest;
  EXPECT_EQ(other, *digest);
  other.digest.back() ^= 1;
  EXPECT_NE(other, *digest);
  ParsedDigest sha512 = *digest;
  sha512.algorithm = HashAlgorithm::kSha512;
  EXPECT_NE(sha512, *digest);
  const absl::flat_hash_set<ParsedDigest> set = {*digest, other, sha512};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(set.contains(*ParseDigest(text)));
}

TEST(DescriptorTest, ParamsAndGeometryOf) {
  Descriptor d;
  d.hash_algorithm = HashAlgorithm::kSha512;
  d.log_block_size = 10;
  d.salt = "salt";
  d.data_size = 5000;
  absl::StatusOr<MerkleParams> params = ParamsOf(d);
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->hash_algorithm, HashAlgorithm::kSha512);
  EXPECT_EQ(params->block_size, 1024u);
  EXPECT_EQ(params->salt, "salt");
  absl::StatusOr<TreeGeometry> geometry = GeometryOf(d);
  ASSERT_TRUE(geometry.ok()) << geometry.status();
  EXPECT_EQ(geometry->data_block_count(), 5u);
  for (uint8_t log : {uint8_t{6}, uint8_t{31}, uint8_t{32}, uint8_t{255}}) {
    d.log_block_size = log;  // too small for SHA-512, or too large
    EXPECT_EQ(ParamsOf(d).status().code(), absl::StatusCode::kInvalidArgument)
        << int{log};
    EXPECT_EQ(GeometryOf(d).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

Descriptor DmVerityDescriptor() {
  Descriptor d;
  d.format = TreeFormat::kDmVerity;
  d.log_block_size = 12;
  d.salt = std::string(200, 's');  // longer than fs-verity allows
  d.data_size = 3 * 4096;
  d.root_hash = std::string(32, '\x5a');
  return d;
}

// A dm-verity descriptor is veritysetup's superblock (zero UUID) and the
// root hash; its hash is the digest.
TEST(DescriptorTest, DmVerityIsTheSuperblockAndTheRootHash) {
  const Descriptor d = DmVerityDescriptor();
  absl::StatusOr<std::string> bytes = d.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_EQ(bytes->size(), 512u + 32);
  EXPECT_EQ(bytes->substr(0, 8), std::string("verity\0\0", 8));
  EXPECT_EQ(bytes->substr(512), d.root_hash);
  absl::StatusOr<DmVeritySuperblock> superblock =
      ParseDmVeritySuperblock(AsBytes(*bytes));
  ASSERT_TRUE(superblock.ok()) << superblock.status();
  EXPECT_EQ(superblock->data_blocks, 3u);
  EXPECT_EQ(superblock->params.salt, d.salt);
  EXPECT_EQ(superblock->uuid, Uuid{});
  absl::StatusOr<std::string> digest = d.ComputeFileDigest();
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(*digest, ComputeHash(HashAlgorithm::kSha256, AsBytes(*bytes)));
  absl::StatusOr<Descriptor> parsed = ParseDescriptor(AsBytes(*bytes));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, d);
  absl::StatusOr<MerkleParams> params = ParamsOf(d);
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params->format, TreeFormat::kDmVerity);
  // The same fields as fs-verity's give another digest.
  Descriptor fs = d;
  fs.format = TreeFormat::kFsVerity;
  fs.salt = "s";
  Descriptor dm = d;
  dm.salt = "s";
  EXPECT_NE(*fs.ComputeFileDigest(), *dm.ComputeFileDigest());
}

TEST(DescriptorTest, DmVerityRefusesWhatItCannotDescribe) {
  Descriptor d = DmVerityDescriptor();
  d.data_size = 4096 * 3 + 1;  // a partial block
  EXPECT_EQ(d.Serialize().status().code(), absl::StatusCode::kInvalidArgument);
  d.data_size = 0;  // veritysetup refuses no data
  EXPECT_EQ(d.Serialize().status().code(), absl::StatusCode::kInvalidArgument);
  d = DmVerityDescriptor();
  d.salt = std::string(257, 's');
  EXPECT_EQ(d.Serialize().status().code(), absl::StatusCode::kInvalidArgument);
  d = DmVerityDescriptor();
  d.root_hash.pop_back();
  EXPECT_EQ(d.Serialize().status().code(), absl::StatusCode::kInvalidArgument);
  // Not canonical: a UUID, a trailing byte, a missing root hash byte.
  const std::string good = *DmVerityDescriptor().Serialize();
  std::string bad = good;
  bad[20] = 1;  // in the UUID
  EXPECT_FALSE(ParseDescriptor(AsBytes(bad)).ok());
  EXPECT_FALSE(ParseDescriptor(AsBytes(good + "x")).ok());
  EXPECT_FALSE(ParseDescriptor(AsBytes(good.substr(0, good.size() - 1))).ok());
  bad = good;
  bad[8] = 2;  // superblock version
  EXPECT_FALSE(ParseDescriptor(AsBytes(bad)).ok());
}

TEST(DescriptorTest, EqualityCoversEverySerializedField) {
  Descriptor a;
  a.root_hash = std::string(32, 'r');
  a.data_size = 10;
  EXPECT_EQ(a, a);
  for (int field = 0; field < 6; ++field) {
    Descriptor b = a;
    if (field == 0) b.hash_algorithm = HashAlgorithm::kSha512;
    if (field == 1) b.log_block_size = 13;
    if (field == 2) b.salt = "s";
    if (field == 3) b.data_size = 11;
    if (field == 4) b.root_hash[0] = 'x';
    if (field == 5) b.format = TreeFormat::kDmVerity;
    EXPECT_NE(a, b) << field;
  }
}

}  // namespace
}  // namespace verity
