// dm-verity FEC against `veritysetup format --fec-device` (cryptsetup), the
// reference: the FEC area byte for byte over one and several RS groups, the
// smallest, default, odd and largest root counts, with and without the
// superblock (which FEC does not cover), and a partial last data block (nor
// that).

#include "lib/fec/dm_verity_fec.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/dm_verity.h"

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
  std::string fec;
  const absl::Status status = EncodeFec(
      roots, block_size, blocks,
      [&](uint64_t first, uint64_t count, absl::Span<uint8_t> out) {
        for (uint64_t i = 0; i < count; ++i) {
          const uint64_t index = first + i;
          const std::string& area =
              index < data_blocks ? data : tree->hash_area;
          const uint64_t at = index < data_blocks ? index : index - data_blocks;
          std::memcpy(&out[i * block_size], &area[at * block_size], block_size);
        }
        return absl::OkStatus();
      },
      [&](absl::Span<const uint8_t> bytes) {
        fec.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(fec.size(), FecSize(blocks, roots, block_size));
  return fec;
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
      {4096, 2, 16, 0},
      {4096, 2, 300, 0},
      {512, 3, 700, 100},
      {1024, 4, 260, 0},
      {512, 24, 500, 0},
      {4096, 24, 1, 0},
      {512, 2, 253, 511},
      // 11 groups of 4 KiB blocks: more than one window of them.
      {4096, 2, 2700, 100},
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

// The covered blocks of an image: its data blocks, then its hash area's.
struct Image {
  uint32_t block_size;
  std::vector<std::string> blocks;
  uint64_t data_blocks;
};

Image MakeImage(const std::string& data, uint32_t block_size) {
  DmVerityParams params;
  params.data_block_size = params.hash_block_size = block_size;
  DmVerityBuilder builder(params);
  EXPECT_TRUE(builder.Update(AsBytes(data)).ok());
  absl::StatusOr<DmVerityTree> tree = builder.Finish();
  EXPECT_TRUE(tree.ok()) << tree.status();
  Image image{block_size, {}, tree->layout.data_blocks};
  for (uint64_t i = 0; i < image.data_blocks; ++i) {
    image.blocks.push_back(data.substr(i * block_size, block_size));
  }
  for (size_t at = 0; at < tree->hash_area.size(); at += block_size) {
    image.blocks.push_back(tree->hash_area.substr(at, block_size));
  }
  return image;
}

// Group `r`'s blocks with those at `erased` replaced by garbage (the repair
// must not read them), repaired with `fec`; the rebuilt blocks in order.
std::vector<std::string> Repair(const FecCodec& codec, const Image& image,
                                const std::string& fec, uint64_t r,
                                const std::vector<int>& erased) {
  const uint64_t rounds = FecRounds(image.blocks.size(), codec.roots());
  const std::string garbage(image.block_size, '\xa5');
  std::vector<const uint8_t*> group(codec.k(), nullptr);
  for (int j = 0; j < codec.k(); ++j) {
    const uint64_t index = r + j * rounds;
    if (index < image.blocks.size()) {
      group[j] = AsBytes(image.blocks[index]).data();
    }
  }
  for (int j : erased) group[j] = AsBytes(garbage).data();
  std::vector<std::string> rebuilt(erased.size(),
                                   std::string(image.block_size, '\0'));
  std::vector<uint8_t*> out;
  for (std::string& block : rebuilt)
    out.push_back(AsMutableBytes(&block).data());
  const size_t group_bytes = size_t{image.block_size} * codec.roots();
  const absl::Status status = codec.RepairGroup(
      group, erased, AsBytes(fec).subspan(r * group_bytes, group_bytes),
      image.block_size, out);
  EXPECT_TRUE(status.ok()) << status;
  return rebuilt;
}

// 1 to `roots` bad blocks per group, in the data, in the hash area and in
// both, each rebuilt exactly, from our FEC and from veritysetup's; more than
// `roots` refused; a damaged parity byte rebuilds a wrong block (which the
// hash then catches).
TEST(DmVerityFecTest, RepairsUpToRootsBadBlocksPerGroup) {
  constexpr uint32_t kBlock = 512;
  constexpr int kRoots = 4;
  // 700 data blocks and 48 hash blocks (16 digests a block: 44, 3 and 1):
  // 3 groups of k = 251 members, the hash blocks last in each.
  const std::string data = RandomBytes(700 * kBlock, 5);
  const Image image = MakeImage(data, kBlock);
  ASSERT_EQ(image.blocks.size(), 748u);
  absl::StatusOr<const FecCodec*> created = FecCodec::Create(kRoots);
  ASSERT_TRUE(created.ok());
  const FecCodec* const codec = *created;
  const std::string ours = OurFec(data, kBlock, kRoots);
  const std::string theirs = VeritysetupFec(data, kBlock, kRoots, false);
  ASSERT_TRUE(ours == theirs);
  const uint64_t rounds = FecRounds(image.blocks.size(), kRoots);
  ASSERT_EQ(rounds, 3u);
  // Member j of group r is block r + 3j: j < 234 in the data, 234..248 in
  // the hash area (blocks 700..747), 249 and 250 zero padding (or a hash
  // block, in group 0).
  // clang-format off
  const std::vector<std::vector<int>> patterns = {
      {0}, {100}, {248}, {7, 8}, {0, 247}, {1, 50, 246}, {10, 20, 30, 40},
      {0, 1, 247, 248}, {245, 246, 247, 248}};
  // clang-format on
  for (uint64_t r = 0; r < rounds; ++r) {
    for (const std::vector<int>& erased : patterns) {
      for (const std::string* fec : {&ours, &theirs}) {
        const std::vector<std::string> rebuilt =
            Repair(*codec, image, *fec, r, erased);
        for (size_t i = 0; i < erased.size(); ++i) {
          EXPECT_TRUE(rebuilt[i] == image.blocks[r + erased[i] * rounds])
              << "group " << r << ", member " << erased[i] << " of "
              << erased.size() << (fec == &ours ? " (ours)" : " (theirs)");
        }
      }
    }
  }
  // One more than the roots.
  std::vector<const uint8_t*> group(codec->k(), nullptr);
  std::vector<std::string> out(kRoots + 1, std::string(kBlock, '\0'));
  std::vector<uint8_t*> out_ptrs;
  for (std::string& block : out)
    out_ptrs.push_back(AsMutableBytes(&block).data());
  EXPECT_EQ(
      codec
          ->RepairGroup(group, {0, 1, 2, 3, 4},
                        AsBytes(ours).first(kBlock * kRoots), kBlock, out_ptrs)
          .code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      codec
          ->RepairGroup(group, {3, 3}, AsBytes(ours).first(kBlock * kRoots),
                        kBlock, absl::MakeSpan(out_ptrs).first(2))
          .code(),
      absl::StatusCode::kInvalidArgument);
  // A flipped parity byte: the rebuilt block is wrong at that offset only.
  std::string damaged = ours;
  damaged[5 * kRoots] ^= 0x01;  // group 0, byte offset 5, parity 0
  const std::vector<std::string> wrong = Repair(*codec, image, damaged, 0, {9});
  const std::string& right = image.blocks[9 * rounds];
  EXPECT_NE(wrong[0][5], right[5]);
  EXPECT_EQ(wrong[0].substr(6), right.substr(6));
}

// Windows of groups, whatever their number, give the parity of each group
// encoded on its own; reads stay within the blocks; the first error of a read
// or a write ends the encoding.
TEST(DmVerityFecTest, WindowsEncodeEachGroupAsAlone) {
  constexpr uint32_t kBlock = 4096;
  constexpr int kRoots = 3;
  constexpr uint64_t kBlocks = 5000;  // 20 groups; 8 in a window
  const std::string image = RandomBytes(kBlocks * kBlock, 9);
  absl::StatusOr<const FecCodec*> created = FecCodec::Create(kRoots);
  ASSERT_TRUE(created.ok());
  const FecCodec* const codec = *created;
  const uint64_t rounds = FecRounds(kBlocks, kRoots);
  ASSERT_GT(rounds, kFecWindowBytes / (kBlock * codec->k()));
  std::string expected(FecSize(kBlocks, kRoots, kBlock), '\0');
  std::vector<uint8_t> scratch;
  for (uint64_t r = 0; r < rounds; ++r) {
    std::vector<const uint8_t*> group(codec->k(), nullptr);
    for (int j = 0; j < codec->k(); ++j) {
      if (r + j * rounds < kBlocks) {
        group[j] = AsBytes(image).data() + (r + j * rounds) * kBlock;
      }
    }
    codec->EncodeGroup(group, kBlock,
                       AsMutableBytes(&expected).subspan(
                           r * kBlock * kRoots, size_t{kBlock} * kRoots),
                       scratch);
  }
  std::string fec;
  int writes = 0;
  const auto read = [&](uint64_t first, uint64_t count,
                        absl::Span<uint8_t> out) {
    EXPECT_LE(first + count, kBlocks);
    EXPECT_EQ(out.size(), count * kBlock);
    std::memcpy(out.data(), image.data() + first * kBlock, out.size());
    return absl::OkStatus();
  };
  const auto write = [&](absl::Span<const uint8_t> bytes) {
    ++writes;
    fec.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return absl::OkStatus();
  };
  ASSERT_TRUE(EncodeFec(kRoots, kBlock, kBlocks, read, write).ok());
  EXPECT_GT(writes, 1);
  EXPECT_TRUE(fec == expected);

  int reads = 0;
  const absl::Status failed = EncodeFec(
      kRoots, kBlock, kBlocks,
      [&](uint64_t first, uint64_t count, absl::Span<uint8_t> out) {
        return ++reads == 300 ? absl::DataLossError("bad read")
                              : read(first, count, out);
      },
      write);
  EXPECT_EQ(failed.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(reads, 300);
  EXPECT_EQ(EncodeFec(kRoots, kBlock, kBlocks, read,
                      [](absl::Span<const uint8_t>) {
                        return absl::ResourceExhaustedError("disk full");
                      })
                .code(),
            absl::StatusCode::kResourceExhausted);
}

// Blocks streamed in pieces of any size, a partial block zero-padded, give
// the FEC area EncodeFec computes from the same blocks; too much input, or too
// little, is refused.
TEST(DmVerityFecTest, StreamingEncodesAsWindowsDo) {
  constexpr uint32_t kBlock = 1024;
  for (int roots : {2, 5, 24}) {
    for (uint64_t blocks : {1, 250, 2000}) {
      SCOPED_TRACE(absl::StrCat(roots, " roots, ", blocks, " blocks"));
      // The first blocks - 3 blocks whole, then one of 100 bytes (padded),
      // then the rest: as a Put's partial last data block, then its tree.
      const uint64_t whole = blocks > 3 ? blocks - 3 : 0;
      std::string image = RandomBytes(blocks * kBlock, blocks + roots);
      if (blocks > 3)
        std::memset(&image[whole * kBlock + 100], 0, kBlock - 100);
      std::string expected;
      ASSERT_TRUE(
          EncodeFec(
              roots, kBlock, blocks,
              [&](uint64_t first, uint64_t count, absl::Span<uint8_t> out) {
                std::memcpy(out.data(), &image[first * kBlock], out.size());
                return absl::OkStatus();
              },
              [&](absl::Span<const uint8_t> bytes) {
                expected.append(reinterpret_cast<const char*>(bytes.data()),
                                bytes.size());
                return absl::OkStatus();
              })
              .ok());
      absl::StatusOr<FecStreamEncoder> stream =
          FecStreamEncoder::Create(roots, kBlock, blocks);
      ASSERT_TRUE(stream.ok()) << stream.status();
      std::mt19937 random(static_cast<uint32_t>(blocks));
      const auto feed = [&](uint64_t from, uint64_t to) {
        while (from < to) {
          const uint64_t n = std::min<uint64_t>(to - from, random() % 3000 + 1);
          ASSERT_TRUE(stream->Update(AsBytes(image).subspan(from, n)).ok());
          from += n;
        }
      };
      if (blocks > 3) {
        feed(0, whole * kBlock + 100);
        ASSERT_TRUE(stream->PadBlock().ok());
        feed((whole + 1) * kBlock, blocks * kBlock);
      } else {
        feed(0, blocks * kBlock);
      }
      absl::StatusOr<std::string> fec = stream->Finish();
      ASSERT_TRUE(fec.ok()) << fec.status();
      EXPECT_TRUE(*fec == expected);
      EXPECT_EQ(stream->Update(AsBytes(image).first(1)).code(),
                absl::StatusCode::kInvalidArgument);
    }
  }
  absl::StatusOr<FecStreamEncoder> short_input =
      FecStreamEncoder::Create(2, kBlock, 3);
  ASSERT_TRUE(short_input.ok());
  ASSERT_TRUE(
      short_input->Update(AsBytes(RandomBytes(2 * kBlock + 5, 1))).ok());
  EXPECT_EQ(short_input->Finish().status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FecStreamEncoder::Create(2, kBlock, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DmVerityFecTest, RootsOutsideTwoToTwentyFourAreRefused) {
  for (int roots : {-1, 0, 1, 25, 255}) {
    EXPECT_EQ(FecCodec::Create(roots).status().code(),
              absl::StatusCode::kInvalidArgument)
        << roots;
  }
  EXPECT_TRUE(FecCodec::Create(2).ok());
  EXPECT_TRUE(FecCodec::Create(24).ok());
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
