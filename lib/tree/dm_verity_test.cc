// dm-verity trees against the reference, `veritysetup format` (cryptsetup):
// root hashes and hash devices byte for byte, with and without the
// superblock, over sizes around block and level boundaries, both formats,
// both algorithms, salts of every shape and pairs of block sizes. Then the
// layout, the superblock and UUIDs on their own.

#include "lib/tree/dm_verity.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/merkle_builder.h"

namespace verity {
namespace {

constexpr char kVeritysetup[] = "/usr/sbin/veritysetup";

struct Reference {
  std::string root_hash;    // hex, as printed
  std::string hash_device;  // the file it wrote
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Runs `veritysetup format` on `data` with `params`; `uuid` empty: no
// superblock.
Reference RunVeritysetup(const std::string& data, const DmVerityParams& params,
                         const std::string& uuid) {
  absl::StatusOr<std::string> data_path = WriteTestFile("dm-data", data);
  EXPECT_TRUE(data_path.ok()) << data_path.status();
  const std::string hash_path = absl::StrCat(TestTempDir(), "/dm-hash");
  unlink(hash_path.c_str());
  std::string command = absl::StrCat(
      kVeritysetup, " format ", ShellQuote(*data_path), " ",
      ShellQuote(hash_path), " --hash=", HashAlgorithmName(params.algorithm),
      " --data-block-size=", params.data_block_size,
      " --hash-block-size=", params.hash_block_size,
      " --format=", params.format, " --salt=",
      params.salt.empty() ? "-" : absl::BytesToHexString(params.salt));
  absl::StrAppend(&command, uuid.empty() ? " --no-superblock"
                                         : absl::StrCat(" --uuid=", uuid));
  absl::StatusOr<std::string> out = RunShellCommand(command + " 2>&1");
  EXPECT_TRUE(out.ok()) << out.status();
  Reference reference;
  const std::string key = "Root hash:";
  const size_t at = out.ok() ? out->find(key) : std::string::npos;
  EXPECT_NE(at, std::string::npos) << (out.ok() ? *out : "");
  if (at != std::string::npos) {
    const size_t start = out->find_first_not_of(" \t", at + key.size());
    reference.root_hash = out->substr(start, out->find('\n', start) - start);
  }
  reference.hash_device = ReadFile(hash_path);
  return reference;
}

// Builds in chunks of `chunk` bytes.
DmVerityTree Build(const std::string& data, const DmVerityParams& params,
                   size_t chunk) {
  DmVerityBuilder builder(params);
  for (size_t at = 0; at < data.size(); at += chunk) {
    EXPECT_TRUE(builder.Update(AsBytes(data).subspan(at, chunk)).ok());
  }
  absl::StatusOr<DmVerityTree> tree = builder.Finish();
  EXPECT_TRUE(tree.ok()) << tree.status();
  return tree.ok() ? *std::move(tree) : DmVerityTree{};
}

struct Case {
  HashAlgorithm algorithm;
  uint32_t data_block_size;
  uint32_t hash_block_size;
  size_t salt_size;
  int format;
  // Whole data blocks; each is also tried with a partial block after it.
  std::vector<uint64_t> blocks;
};

TEST(DmVerityTest, MatchesVeritysetup) {
  if (access(kVeritysetup, X_OK) != 0) {
    FAIL() << kVeritysetup << " is missing: install cryptsetup-bin";
  }
  // Digests per hash block: 128, 16, 16, 8 and 128: the block counts sit on
  // either side of where a level is added.
  const std::vector<Case> cases = {
      {HashAlgorithm::kSha256, 4096, 4096, 32, 1, {1, 2, 128, 129}},
      {HashAlgorithm::kSha256, 512, 512, 0, 1, {15, 16, 17, 256, 257}},
      {HashAlgorithm::kSha512, 512, 1024, 1, 0, {16, 17, 256, 257}},
      {HashAlgorithm::kSha512, 4096, 512, 256, 1, {8, 9, 64, 65, 513}},
      {HashAlgorithm::kSha256, 1024, 4096, 63, 0, {1, 3, 128, 129}},
  };
  const std::string uuid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  absl::StatusOr<Uuid> uuid_bytes = ParseUuid(uuid);
  ASSERT_TRUE(uuid_bytes.ok());
  for (const Case& c : cases) {
    DmVerityParams params;
    params.algorithm = c.algorithm;
    params.data_block_size = c.data_block_size;
    params.hash_block_size = c.hash_block_size;
    params.salt = RandomBytes(c.salt_size, c.salt_size + 7);
    params.format = c.format;
    for (uint64_t blocks : c.blocks) {
      for (uint64_t partial : {uint64_t{0}, uint64_t{100}}) {
        const std::string data =
            RandomBytes(blocks * c.data_block_size + partial, blocks);
        const std::string what = absl::StrCat(
            HashAlgorithmName(c.algorithm), " ", c.data_block_size, "/",
            c.hash_block_size, " salt ", c.salt_size, " format ", c.format,
            ", ", blocks, " blocks + ", partial);
        const DmVerityTree tree = Build(data, params, 1000);
        EXPECT_EQ(tree.layout.data_blocks, blocks) << what;
        const Reference bare = RunVeritysetup(data, params, "");
        EXPECT_EQ(absl::BytesToHexString(tree.root_hash), bare.root_hash)
            << what;
        EXPECT_TRUE(tree.hash_area == bare.hash_device)
            << what << ": " << tree.hash_area.size() << " bytes vs "
            << bare.hash_device.size();
        // With the superblock: it, zeros to the next hash block, the area.
        const Reference with = RunVeritysetup(data, params, uuid);
        std::string device =
            EncodeDmVeritySuperblock(params, blocks, *uuid_bytes);
        device.resize(c.hash_block_size, '\0');
        device += tree.hash_area;
        EXPECT_EQ(with.root_hash, bare.root_hash) << what;
        EXPECT_TRUE(device == with.hash_device) << what;
        absl::StatusOr<DmVeritySuperblock> parsed =
            ParseDmVeritySuperblock(AsBytes(with.hash_device));
        ASSERT_TRUE(parsed.ok()) << parsed.status() << " " << what;
        EXPECT_EQ(parsed->data_blocks, blocks);
        EXPECT_EQ(parsed->params.salt, params.salt);
        EXPECT_EQ(parsed->params.format, params.format);
        EXPECT_EQ(parsed->params.algorithm, params.algorithm);
        EXPECT_EQ(parsed->params.data_block_size, params.data_block_size);
        EXPECT_EQ(parsed->params.hash_block_size, params.hash_block_size);
        EXPECT_EQ(FormatUuid(parsed->uuid), uuid);
      }
    }
  }
}

// The trees verityd stores for dm-verity blobs are MerkleBuilder trees of
// format kDmVerity: byte-identical with veritysetup's hash device, their
// root hash its root hash, and their descriptor's digest the hash of the
// zero-UUID superblock and the root hash.
TEST(DmVerityTest, MerkleTreesOfDmVerityFormatMatchVeritysetup) {
  if (access(kVeritysetup, X_OK) != 0) {
    FAIL() << kVeritysetup << " is missing: install cryptsetup-bin";
  }
  struct Stored {
    HashAlgorithm algorithm;
    uint32_t block_size;
    size_t salt_size;
    std::vector<uint64_t> blocks;
  };
  const std::vector<Stored> cases = {
      {HashAlgorithm::kSha256, 4096, 0, {1, 2, 128, 129}},
      {HashAlgorithm::kSha256, 1024, 256, {31, 32, 33, 1025}},
      {HashAlgorithm::kSha512, 4096, 5, {1, 64, 65, 4097}},
  };
  for (const Stored& c : cases) {
    DmVerityParams params;
    params.algorithm = c.algorithm;
    params.data_block_size = params.hash_block_size = c.block_size;
    params.salt = RandomBytes(c.salt_size, 9);
    absl::StatusOr<MerkleParams> merkle = MerkleParamsOf(params);
    ASSERT_TRUE(merkle.ok()) << merkle.status();
    EXPECT_EQ(merkle->format, TreeFormat::kDmVerity);
    for (uint64_t blocks : c.blocks) {
      const std::string data = RandomBytes(blocks * c.block_size, blocks);
      const std::string what =
          absl::StrCat(HashAlgorithmName(c.algorithm), " ", c.block_size,
                       " salt ", c.salt_size, ", ", blocks, " blocks");
      MerkleBuilder builder(*merkle);
      ASSERT_TRUE(builder.Update(AsBytes(data)).ok());
      absl::StatusOr<MerkleTree> tree = builder.Finish();
      ASSERT_TRUE(tree.ok()) << tree.status() << " " << what;
      const Reference reference = RunVeritysetup(data, params, "");
      EXPECT_EQ(absl::BytesToHexString(tree->descriptor.root_hash),
                reference.root_hash)
          << what;
      EXPECT_TRUE(tree->tree == reference.hash_device) << what;
      const std::string superblock =
          EncodeDmVeritySuperblock(params, blocks, Uuid{});
      EXPECT_EQ(tree->digest,
                ComputeHash(c.algorithm,
                            AsBytes(superblock + tree->descriptor.root_hash)))
          << what;
    }
  }
  // What dm-verity does not cover is refused, not hashed differently.
  MerkleParams merkle;
  merkle.format = TreeFormat::kDmVerity;
  for (size_t size : {size_t{0}, size_t{4095}, size_t{4097}}) {
    MerkleBuilder builder(merkle);
    ASSERT_TRUE(builder.Update(AsBytes(std::string(size, 'x'))).ok());
    EXPECT_EQ(builder.Finish().status().code(),
              absl::StatusCode::kInvalidArgument)
        << size;
  }
}

TEST(DmVerityTest, OnlyFormatOneWithEqualBlockSizesIsStored) {
  DmVerityParams params;
  params.hash_block_size = 1024;
  EXPECT_EQ(MerkleParamsOf(params).status().code(),
            absl::StatusCode::kInvalidArgument);
  params.hash_block_size = params.data_block_size;
  params.format = 0;
  EXPECT_EQ(MerkleParamsOf(params).status().code(),
            absl::StatusCode::kInvalidArgument);
  params.format = 1;
  params.salt = "pepper";
  absl::StatusOr<MerkleParams> merkle = MerkleParamsOf(params);
  ASSERT_TRUE(merkle.ok());
  const DmVerityParams back = DmVerityParamsOf(*merkle);
  EXPECT_EQ(back.salt, "pepper");
  EXPECT_EQ(back.data_block_size, 4096u);
  EXPECT_EQ(back.hash_block_size, 4096u);
  EXPECT_EQ(back.format, 1);
}

// Reserve() is a hint: too small, exact or too large, the tree is the same.
TEST(DmVerityTest, AnySizeHintBuildsTheSameTree) {
  DmVerityParams params;
  params.data_block_size = params.hash_block_size = 512;  // 16 digests a block
  const std::string data = RandomBytes(300 * 512 + 7, 3);
  const DmVerityTree want = Build(data, params, 4096);
  for (uint64_t hint : {uint64_t{0}, uint64_t{512}, uint64_t{data.size()},
                        uint64_t{100 * data.size()}}) {
    DmVerityBuilder builder(params);
    builder.Reserve(hint);
    ASSERT_TRUE(builder.Update(AsBytes(data)).ok());
    absl::StatusOr<DmVerityTree> tree = builder.Finish();
    ASSERT_TRUE(tree.ok()) << tree.status();
    EXPECT_EQ(tree->root_hash, want.root_hash) << hint;
    EXPECT_TRUE(tree->hash_area == want.hash_area) << hint;
  }
}

TEST(DmVerityTest, LayoutCountsLevelsTopFirst) {
  DmVerityParams params;  // SHA-256, 4 KiB: 128 digests a hash block
  absl::StatusOr<DmVerityLayout> one = MakeDmVerityLayout(params, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->level_blocks.empty());
  EXPECT_EQ(one->hash_blocks(), 0u);
  absl::StatusOr<DmVerityLayout> layout =
      MakeDmVerityLayout(params, 128 * 128 + 1);
  ASSERT_TRUE(layout.ok());
  EXPECT_EQ(layout->level_blocks, (std::vector<uint64_t>{129, 2, 1}));
  EXPECT_EQ(layout->hash_blocks(), 132u);
  EXPECT_EQ(layout->LevelStart(2), 0u);
  EXPECT_EQ(layout->LevelStart(1), 1u);
  EXPECT_EQ(layout->LevelStart(0), 3u);
  EXPECT_EQ(MakeDmVerityLayout(params, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DmVerityTest, InvalidParamsAreNamed) {
  const auto message = [](DmVerityParams params) {
    return std::string(ValidateDmVerityParams(params).message());
  };
  DmVerityParams params;
  params.data_block_size = 256;
  EXPECT_NE(message(params).find("data block size"), std::string::npos);
  params = {};
  params.hash_block_size = 3000;
  EXPECT_NE(message(params).find("hash block size"), std::string::npos);
  params = {};
  params.salt.assign(257, 'x');
  EXPECT_NE(message(params).find("salt"), std::string::npos);
  params = {};
  params.format = 2;
  EXPECT_NE(message(params).find("format"), std::string::npos);
  params.data_block_size = 256;
  DmVerityBuilder builder(params);
  EXPECT_EQ(builder.Update(AsBytes("x")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(builder.Finish().status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DmVerityTest, LessThanABlockIsRefused) {
  DmVerityBuilder builder(DmVerityParams{});
  ASSERT_TRUE(builder.Update(AsBytes(std::string(4095, 'a'))).ok());
  EXPECT_EQ(builder.Finish().status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DmVerityTest, SuperblocksOfOtherThingsAreRefused) {
  DmVerityParams params;
  std::string block = EncodeDmVeritySuperblock(params, 10, Uuid{});
  ASSERT_TRUE(ParseDmVeritySuperblock(AsBytes(block)).ok());
  EXPECT_FALSE(ParseDmVeritySuperblock(AsBytes(block).first(511)).ok());
  std::string bad = block;
  bad[0] = 'V';
  EXPECT_FALSE(ParseDmVeritySuperblock(AsBytes(bad)).ok());
  bad = block;
  bad[8] = 2;  // version
  EXPECT_FALSE(ParseDmVeritySuperblock(AsBytes(bad)).ok());
  bad = block;
  bad[32] = 'x';  // algorithm "xha256"
  EXPECT_FALSE(ParseDmVeritySuperblock(AsBytes(bad)).ok());
  bad = block;
  bad[80] = 1;  // salt size 257
  bad[81] = 1;
  EXPECT_FALSE(ParseDmVeritySuperblock(AsBytes(bad)).ok());
  bad = block;
  bad[12] = 7;  // format
  EXPECT_FALSE(ParseDmVeritySuperblock(AsBytes(bad)).ok());
}

TEST(DmVerityTest, UuidsRoundTrip) {
  absl::StatusOr<Uuid> uuid = ParseUuid("0F1E2D3C-4b5a-6978-8796-a5b4c3d2e1f0");
  ASSERT_TRUE(uuid.ok());
  EXPECT_EQ(FormatUuid(*uuid), "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  for (const char* bad :
       {"", "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "0f1e2d3c-4b5a-6978-8796-a5b4",
        "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg"}) {
    EXPECT_FALSE(ParseUuid(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace verity
