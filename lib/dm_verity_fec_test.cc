// dm-verity FEC against `veritysetup format --fec-device` (cryptsetup), the
// reference: the FEC area byte for byte over one and several RS groups, the
// smallest, default, odd and largest root counts, with and without the
// superblock (which FEC does not cover), and a partial last data block (nor
// that).

#include "lib/dm_verity_fec.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/dm_verity.h"
#include "lib/fsverity_cli.h"
#include "lib/test_blob.h"

namespace verity {
namespace {

constexpr char kVeritysetup[] = "/usr/sbin/veritysetup";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// What veritysetup writes as the FEC device for `data`.
std::string VeritysetupFec(const std::string& data, uint32_t block_size,
                           int roots, bool superblock) {
  absl::StatusOr<std::string> data_path = WriteTestFile("fec-data", data);
  EXPECT_TRUE(data_path.ok()) << data_path.status();
  const std::string hash_path = absl::StrCat(TestTempDir(), "/fec-hash");
  const std::string fec_path = absl::StrCat(TestTempDir(), "/fec-fec");
  unlink(hash_path.c_str());
  unlink(fec_path.c_str());
  absl::StatusOr<std::string> out = RunShellCommand(absl::StrCat(
      kVeritysetup, " format ", ShellQuote(*data_path), " ",
      ShellQuote(hash_path), " --salt=- --data-block-size=", block_size,
      " --hash-block-size=", block_size, " --fec-device=", ShellQuote(fec_path),
      " --fec-roots=", roots, superblock ? "" : " --no-superblock", " 2>&1"));
  EXPECT_TRUE(out.ok()) << out.status();
  return ReadFile(fec_path);
}

// Ours: the tree, then FEC over the data blocks and the hash area's.
std::string OurFec(const std::string& data, uint32_t block_size, int roots) {
  DmVerityParams params;
  params.data_block_size = params.hash_block_size = block_size;
  DmVerityBuilder builder(params);
  EXPECT_TRUE(builder.Update(AsBytes(data)).ok());
  absl::StatusOr<DmVerityTree> tree = builder.Finish();
  EXPECT_TRUE(tree.ok()) << tree.status();
  const uint64_t data_blocks = tree->layout.data_blocks;
  const uint64_t blocks = data_blocks + tree->layout.hash_blocks();
  absl::StatusOr<std::string> fec = ComputeFec(
      roots, block_size, blocks,
      [&](uint64_t i) -> absl::StatusOr<absl::Span<const uint8_t>> {
        const std::string& area = i < data_blocks ? data : tree->hash_area;
        const uint64_t at = i < data_blocks ? i : i - data_blocks;
        return AsBytes(area).subspan(at * block_size, block_size);
      });
  EXPECT_TRUE(fec.ok()) << fec.status();
  EXPECT_EQ(fec->size(), FecSize(blocks, roots, block_size));
  return fec.ok() ? *fec : "";
}

TEST(DmVerityFecTest, MatchesVeritysetup) {
  if (access(kVeritysetup, X_OK) != 0) {
    FAIL() << kVeritysetup << " is missing: install cryptsetup-bin";
  }
  struct Case {
    uint32_t block_size;
    int roots;
    uint64_t data_blocks;  // with the hash blocks: 1 or more RS groups
    uint64_t partial;
  };
  const Case cases[] = {
      {4096, 2, 16, 0},   {4096, 2, 300, 0}, {512, 3, 700, 100},
      {1024, 4, 260, 0},  {512, 24, 500, 0}, {4096, 24, 1, 0},
      {512, 2, 253, 511},
  };
  for (const Case& c : cases) {
    const std::string data = RandomBytes(
        c.data_blocks * c.block_size + c.partial, c.data_blocks + c.roots);
    const std::string ours = OurFec(data, c.block_size, c.roots);
    for (bool superblock : {false, true}) {
      EXPECT_TRUE(ours ==
                  VeritysetupFec(data, c.block_size, c.roots, superblock))
          << c.block_size << "-byte blocks, " << c.roots << " roots, "
          << c.data_blocks << " blocks + " << c.partial << ", superblock "
          << superblock;
    }
  }
}

TEST(DmVerityFecTest, RootsOutsideTwoToTwentyFourAreRefused) {
  for (int roots : {-1, 0, 1, 25, 255}) {
    EXPECT_EQ(FecEncoder::Create(roots).status().code(),
              absl::StatusCode::kInvalidArgument)
        << roots;
  }
  EXPECT_TRUE(FecEncoder::Create(2).ok());
  EXPECT_TRUE(FecEncoder::Create(24).ok());
}

TEST(DmVerityFecTest, SizesCountWholeGroups) {
  EXPECT_EQ(FecRounds(1, 2), 1u);
  EXPECT_EQ(FecRounds(253, 2), 1u);
  EXPECT_EQ(FecRounds(254, 2), 2u);
  EXPECT_EQ(FecSize(254, 2, 4096), 2u * 4096 * 2);
  EXPECT_EQ(FecRounds(232, 23), 1u);
  EXPECT_EQ(FecRounds(233, 23), 2u);
}

}  // namespace
}  // namespace verity
