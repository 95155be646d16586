// The dm-verity trust anchor from the command line: a superblock, spelled-out
// parameters, and what is refused.

#include "client/cli/dm_verity_root.h"

#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/dm_verity.h"

namespace verity::cli {
namespace {

using ::testing::HasSubstr;

const std::string kRoot(64, 'a');  // hex of 32 bytes

// A hash device whose superblock says `blocks` data blocks, `tree_blocks`
// hash blocks long after it (zeros: only its size matters here).
std::string WriteHashDevice(const DmVerityParams& params, uint64_t blocks,
                            uint64_t tree_blocks) {
  const std::string path = TestTempDir() + "/hash-device";
  std::string superblock =
      EncodeDmVeritySuperblock(params, blocks, Uuid{1, 2, 3});
  superblock.resize(params.hash_block_size, '\0');
  std::ofstream(path, std::ios::binary)
      << superblock << std::string(tree_blocks * params.hash_block_size, '\0');
  return path;
}

TEST(DmVerityRootTest, FromTheSuperblock) {
  DmVerityParams params;
  params.algorithm = HashAlgorithm::kSha512;
  params.data_block_size = params.hash_block_size = 1024;
  params.salt = "pepper";
  DmVerityRootFlags flags;
  flags.root_hash = std::string(128, 'b');
  // 77 blocks of 1 KiB with 64-byte digests: 16 per hash block, so levels
  // of 5 and 1 hash blocks.
  flags.hash_device = WriteHashDevice(params, 77, 6);
  // The superblock alone does not say how large the image is.
  absl::StatusOr<sdk::DmVerityRoot> root = ResolveDmVerityRoot(flags);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("not trusted alone"));
  flags.data_blocks = 77;
  root = ResolveDmVerityRoot(flags);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->hash_algorithm, sdk::DigestAlgorithm::kSha512);
  EXPECT_EQ(root->data_block_size, 1024u);
  EXPECT_EQ(root->salt, "pepper");
  EXPECT_EQ(root->data_blocks, 77u);
  EXPECT_EQ(root->root_hash, std::string(64, '\xbb'));
  flags.data_blocks.reset();
  flags.data_size = 77 * 1024;
  EXPECT_TRUE(ResolveDmVerityRoot(flags).ok());
  flags.data_size.reset();
  // An image of another size than the superblock says is refused.
  EXPECT_TRUE(ResolveDmVerityRoot(flags, uint64_t{77 * 1024}).ok());
  EXPECT_FALSE(ResolveDmVerityRoot(flags, uint64_t{78 * 1024}).ok());
  EXPECT_FALSE(ResolveDmVerityRoot(flags, uint64_t{77 * 1024 + 1}).ok());
  flags.data_size = 76 * 1024;
  EXPECT_FALSE(ResolveDmVerityRoot(flags, uint64_t{77 * 1024}).ok());
}

// A superblock that claims the blocks of one hash level makes that level's
// hash blocks an "image" with the same root hash: the size the caller gives
// refuses it, and so does a hash device whose size is not that tree's.
TEST(DmVerityRootTest, RefusesASuperblockOfAnotherLevel) {
  DmVerityParams params;  // SHA-256, 4 KiB: 128 digests per hash block
  DmVerityRootFlags flags;
  flags.root_hash = kRoot;
  // 3000 data blocks: levels of 24 and 1 hash blocks. The forged superblock
  // says 24 data blocks (the lower level), whose tree is the top block.
  flags.hash_device = WriteHashDevice(params, 24, 25);
  flags.data_blocks = 3000;
  absl::StatusOr<sdk::DmVerityRoot> root = ResolveDmVerityRoot(flags);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(root.status().message()),
              HasSubstr("the superblock says 24 data blocks"));
  // Pinned to the forged size, the device is too long for 24 blocks' tree.
  flags.data_blocks = 24;
  root = ResolveDmVerityRoot(flags);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(root.status().message()), HasSubstr("1 levels"));
  // The honest device of 3000 blocks, cut short, is refused too.
  flags.hash_device = WriteHashDevice(params, 3000, 24);
  flags.data_blocks = 3000;
  EXPECT_FALSE(ResolveDmVerityRoot(flags).ok());
  flags.hash_device = WriteHashDevice(params, 3000, 25);
  EXPECT_TRUE(ResolveDmVerityRoot(flags).ok());
  // --data-blocks and --data-size together are one too many.
  flags.data_size = 3000 * 4096;
  EXPECT_FALSE(ResolveDmVerityRoot(flags).ok());
}

TEST(DmVerityRootTest, FromSpelledOutParams) {
  DmVerityRootFlags flags;
  flags.root_hash = kRoot;
  flags.params = "hash=sha256,block-size=4096,data-blocks=9,salt=00ff";
  absl::StatusOr<sdk::DmVerityRoot> root = ResolveDmVerityRoot(flags);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->data_block_size, 4096u);
  EXPECT_EQ(root->hash_block_size, 4096u);
  EXPECT_EQ(root->data_blocks, 9u);
  EXPECT_EQ(root->salt, std::string("\x00\xff", 2));
  // The digest is the one lib computes for the same anchor.
  absl::StatusOr<sdk::Digest> digest = sdk::Digest::OfDmVerity(*root);
  ASSERT_TRUE(digest.ok()) << digest.status();
  DmVerityParams params;
  params.salt = root->salt;
  absl::StatusOr<Descriptor> descriptor =
      DmVerityDescriptorOf(params, 9, root->root_hash);
  ASSERT_TRUE(descriptor.ok());
  EXPECT_EQ(digest->bytes(), *descriptor->ComputeFileDigest());
  // data-blocks may come from the image instead.
  flags.params = "salt=-,data-block-size=1024,hash-block-size=1024";
  root = ResolveDmVerityRoot(flags, uint64_t{3 * 1024});
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->data_blocks, 3u);
  EXPECT_TRUE(root->salt.empty());
}

TEST(DmVerityRootTest, RefusesWhatCannotNameABlob) {
  DmVerityRootFlags flags;
  flags.params = "data-blocks=1";
  EXPECT_FALSE(ResolveDmVerityRoot(flags).ok());  // no root hash
  flags.root_hash = kRoot;
  for (const char* params :
       {"data-blocks=1,format=0", "data-blocks=1,hash=md5", "block-size=4096",
        "data-blocks=1,colour=blue", "data-blocks=1,salt=abc",
        "data-blocks=1,block-size=3000"}) {
    flags.params = params;
    EXPECT_EQ(ResolveDmVerityRoot(flags).status().code(),
              absl::StatusCode::kInvalidArgument)
        << params;
  }
  flags.params = "data-blocks=1,hash-block-size=1024";  // unequal sizes
  absl::StatusOr<sdk::DmVerityRoot> root = ResolveDmVerityRoot(flags);
  ASSERT_TRUE(root.ok());
  EXPECT_FALSE(sdk::Digest::OfDmVerity(*root).ok());
  flags.params = "data-blocks=1";
  flags.root_hash = "abcd";  // too short for SHA-256
  root = ResolveDmVerityRoot(flags);
  ASSERT_TRUE(root.ok());
  EXPECT_FALSE(sdk::Digest::OfDmVerity(*root).ok());
  // Both sources, or a hash device without a superblock.
  flags.root_hash = kRoot;
  flags.hash_device = TestTempDir() + "/not-a-hash-device";
  std::ofstream(flags.hash_device) << std::string(600, 'x');
  EXPECT_FALSE(ResolveDmVerityRoot(flags).ok());
  flags.params.clear();
  EXPECT_EQ(ResolveDmVerityRoot(flags).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace verity::cli
