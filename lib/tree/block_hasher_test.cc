// BlockHasher against a reference written from fs-verity's definition (SHA of
// the salt zero-padded to the compression block, then the block zero-padded to
// the block size), on both the multi-buffer paths (SHA-256 two blocks at a
// time with SHA-NI, SHA-512 four at a time with AVX2) and the fallback.

#include "lib/tree/block_hasher.h"

#include <openssl/sha.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/hash/sha256_x2.h"
#include "lib/hash/sha512_x4.h"

namespace verity {
namespace {

std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

std::string Reference(HashAlgorithm algorithm, const std::string& salt,
                      uint32_t block_size, std::string block) {
  const size_t unit = algorithm == HashAlgorithm::kSha256 ? 64 : 128;
  std::string message = salt;
  if (!salt.empty()) message.resize((salt.size() + unit - 1) / unit * unit);
  block.resize(block_size, '\0');
  message += block;
  std::string digest(algorithm == HashAlgorithm::kSha256 ? 32 : 64, '\0');
  const auto* in = reinterpret_cast<const uint8_t*>(message.data());
  auto* out = reinterpret_cast<uint8_t*>(digest.data());
  if (algorithm == HashAlgorithm::kSha256) {
    SHA256(in, message.size(), out);
  } else {
    SHA512(in, message.size(), out);
  }
  return digest;
}

bool CpuInfoLists(absl::string_view flag) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string word;
  while (cpuinfo >> word) {
    if (word == flag) return true;
  }
  return false;
}

// Runs each test on the multi-buffer paths (those the CPU has) and on the
// fallback.
class BlockHasherTest : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    const bool fallback = GetParam();
    if (!fallback && !Sha256X2Available() && !Sha512X4Available()) {
      GTEST_SKIP() << "neither SHA-NI nor AVX2";
    }
    DisableSha256X2ForTesting(fallback);
    DisableSha512X4ForTesting(fallback);
  }
  void TearDown() override {
    DisableSha256X2ForTesting(false);
    DisableSha512X4ForTesting(false);
  }

  // HashBlocks over `count` blocks (the last `tail` bytes short, if tail > 0)
  // read from an address `misalign` bytes past an aligned one.
  void Check(HashAlgorithm algorithm, uint32_t block_size,
             const std::string& salt, size_t count, size_t tail,
             size_t misalign) {
    const size_t size = count * block_size - tail;
    const std::string storage =
        RandomBytes(size + misalign, block_size * 131 + count * 7 + tail);
    const absl::Span<const uint8_t> data =
        AsBytes(storage).subspan(misalign, size);
    const BlockHasher hasher(MerkleParams{algorithm, block_size, salt});
    std::string digests(count * hasher.digest_size(), '\0');
    hasher.HashBlocks(data, AsMutableBytes(&digests));
    for (size_t i = 0; i < count; ++i) {
      const std::string block(
          storage.substr(misalign + i * block_size,
                         std::min<size_t>(block_size, size - i * block_size)));
      ASSERT_EQ(digests.substr(i * hasher.digest_size(), hasher.digest_size()),
                Reference(algorithm, salt, block_size, block))
          << "block " << i << " of " << count << ", block size " << block_size
          << ", salt " << salt.size() << ", tail " << tail << ", misalign "
          << misalign;
    }
  }
};

TEST_P(BlockHasherTest, EveryBlockSizeCountAndTail) {
  for (uint32_t block_size = 64; block_size <= 65536; block_size *= 2) {
    for (size_t count = 1; count <= 9; ++count) {
      for (size_t tail : {size_t{0}, size_t{1}, size_t{block_size / 2}}) {
        Check(HashAlgorithm::kSha256, block_size, "", count, tail, 0);
        Check(HashAlgorithm::kSha256, block_size, RandomBytes(32, 1), count,
              tail, 3);
      }
    }
  }
}

TEST_P(BlockHasherTest, EverySaltLength) {
  for (size_t salt_size = 0; salt_size <= 32; ++salt_size) {
    const std::string salt = RandomBytes(salt_size, 100 + salt_size);
    for (uint32_t block_size : {1024u, 4096u}) {
      for (size_t count : {1, 2, 5}) {
        Check(HashAlgorithm::kSha256, block_size, salt, count, 0, salt_size);
      }
    }
  }
}

TEST_P(BlockHasherTest, Sha512EveryBlockSizeCountTailAndSalt) {
  for (uint32_t block_size = 128; block_size <= 65536; block_size *= 4) {
    for (size_t count = 1; count <= 9; ++count) {
      for (size_t tail : {size_t{0}, size_t{1}, size_t{block_size / 2}}) {
        Check(HashAlgorithm::kSha512, block_size, "", count, tail, 0);
        Check(HashAlgorithm::kSha512, block_size, RandomBytes(32, 1), count,
              tail, 5);
      }
    }
  }
  for (size_t salt_size = 0; salt_size <= 32; ++salt_size) {
    Check(HashAlgorithm::kSha512, 4096, RandomBytes(salt_size, 200 + salt_size),
          5, 0, salt_size);
  }
}

TEST_P(BlockHasherTest, TwoBlocksFromAnywhere) {
  const std::string salt = RandomBytes(5, 3);
  const BlockHasher hasher(MerkleParams{HashAlgorithm::kSha256, 4096, salt});
  const std::string a = RandomBytes(4097, 4);
  const std::string b = RandomBytes(4096, 5);
  uint8_t digest_a[32];
  uint8_t digest_b[32];
  hasher.HashTwoBlocks(AsBytes(a).data() + 1, AsBytes(b).data(), digest_a,
                       digest_b);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(digest_a), 32),
            Reference(HashAlgorithm::kSha256, salt, 4096, a.substr(1)));
  EXPECT_EQ(std::string(reinterpret_cast<char*>(digest_b), 32),
            Reference(HashAlgorithm::kSha256, salt, 4096, b));
}

// `data` cut at `cuts` (ascending offsets) into pieces.
std::vector<ByteChain::Piece> Cut(absl::Span<const uint8_t> data,
                                  const std::vector<size_t>& cuts) {
  std::vector<ByteChain::Piece> pieces;
  size_t begin = 0;
  for (size_t cut : cuts) {
    pieces.push_back(data.subspan(begin, cut - begin));
    begin = cut;
  }
  pieces.push_back(data.subspan(begin));
  return pieces;
}

// A chain must hash as the same bytes in one piece do, wherever the pieces
// end: at every offset of a block, with empty pieces, and cut many times.
TEST_P(BlockHasherTest, ChainsHashAsContiguousBytesForEverySplitPoint) {
  for (HashAlgorithm algorithm :
       {HashAlgorithm::kSha256, HashAlgorithm::kSha512}) {
    const uint32_t block_size = 1024;
    const BlockHasher hasher(
        MerkleParams{algorithm, block_size, RandomBytes(7, 8)});
    const size_t ds = hasher.digest_size();
    for (size_t size : {size_t{3} * block_size, size_t{3} * block_size - 100}) {
      const std::string bytes = RandomBytes(size, 40 + size);
      const size_t blocks = (size + block_size - 1) / block_size;
      std::string want(blocks * ds, '\0');
      hasher.HashBlocks(AsBytes(bytes), AsMutableBytes(&want));
      for (size_t cut = 0; cut <= size; ++cut) {
        // One cut, then the same cut with a second one block later and an
        // empty piece between.
        for (const std::vector<size_t>& cuts :
             {std::vector<size_t>{cut},
              std::vector<size_t>{cut, cut,
                                  std::min(size, cut + block_size + 1)}}) {
          const std::vector<ByteChain::Piece> pieces =
              Cut(AsBytes(bytes), cuts);
          std::string got(blocks * ds, '\0');
          hasher.HashBlocks(ByteChain(pieces), AsMutableBytes(&got));
          ASSERT_EQ(got, want)
              << HashAlgorithmName(algorithm) << " size " << size << " cut at "
              << cut << " of " << cuts.size();
        }
      }
    }
  }
}

TEST_P(BlockHasherTest, ChainsOfManySmallPieces) {
  const BlockHasher hasher(MerkleParams{HashAlgorithm::kSha256, 4096, ""});
  const std::string bytes = RandomBytes(40000, 9);
  std::string want(10 * 32, '\0');
  hasher.HashBlocks(AsBytes(bytes), AsMutableBytes(&want));
  std::mt19937 random(10);
  for (int round = 0; round < 50; ++round) {
    std::vector<size_t> cuts;
    for (size_t at = 0; at < bytes.size();
         at += std::uniform_int_distribution<size_t>(0, 6000)(random)) {
      cuts.push_back(at);
    }
    const std::vector<ByteChain::Piece> pieces = Cut(AsBytes(bytes), cuts);
    std::string got(10 * 32, '\0');
    hasher.HashBlocks(ByteChain(pieces), AsMutableBytes(&got));
    ASSERT_EQ(got, want) << "round " << round;
  }
}

// Pieces shorter than SHA-256's 64-byte unit: a unit spans up to 64 pieces.
TEST_P(BlockHasherTest, ChainsOfPiecesSmallerThanAUnit) {
  const BlockHasher hasher(MerkleParams{HashAlgorithm::kSha256, 1024, "s"});
  const std::string bytes = RandomBytes(5 * 1024 + 17, 11);
  std::string want(6 * 32, '\0');
  hasher.HashBlocks(AsBytes(bytes), AsMutableBytes(&want));
  std::mt19937 random(12);
  for (int round = 0; round < 20; ++round) {
    std::vector<size_t> cuts;
    for (size_t at = 0; at < bytes.size();
         at += std::uniform_int_distribution<size_t>(1, 70)(random)) {
      cuts.push_back(at);
    }
    const std::vector<ByteChain::Piece> pieces = Cut(AsBytes(bytes), cuts);
    std::string got(6 * 32, '\0');
    hasher.HashBlocks(ByteChain(pieces), AsMutableBytes(&got));
    ASSERT_EQ(got, want) << "round " << round;
  }
}

// dm-verity's placements, from their definition: H(salt ‖ block) for format
// 1, H(block ‖ salt) for format 0, the salt as it is. Every salt length that
// shifts the block in the message (or not), both algorithms, contiguous
// blocks in every multi-buffer group size and blocks split between pieces.
TEST_P(BlockHasherTest, DmVerityPlacementsForEverySaltShape) {
  for (HashAlgorithm algorithm :
       {HashAlgorithm::kSha256, HashAlgorithm::kSha512}) {
    for (SaltPlacement placement :
         {SaltPlacement::kBefore, SaltPlacement::kAfter}) {
      for (size_t salt_size :
           {0, 1, 32, 55, 56, 63, 64, 65, 111, 112, 127, 128, 200, 256}) {
        for (uint32_t block_size : {512u, 4096u}) {
          const std::string salt = RandomBytes(salt_size, salt_size + 1);
          const BlockHasher hasher(algorithm, block_size, salt, placement);
          const size_t ds = hasher.digest_size();
          const size_t count = 7;
          const std::string bytes =
              RandomBytes(count * block_size, salt_size * 3 + block_size);
          std::string want;
          for (size_t i = 0; i < count; ++i) {
            const std::string block = bytes.substr(i * block_size, block_size);
            want += ComputeHash(
                algorithm,
                AsBytes(placement == SaltPlacement::kBefore ? salt + block
                                                            : block + salt));
          }
          std::string got(count * ds, '\0');
          hasher.HashBlocks(AsBytes(bytes), AsMutableBytes(&got));
          ASSERT_EQ(got, want) << HashAlgorithmName(algorithm) << " salt "
                               << salt_size << " block " << block_size;
          // Split mid-block, mid-unit, and into pieces smaller than a unit.
          for (size_t cut : {size_t{1}, size_t{block_size + 30},
                             size_t{3 * block_size - 64}}) {
            std::vector<size_t> cuts = {cut};
            for (size_t at = 4 * block_size; at < 5 * block_size; at += 37) {
              cuts.push_back(at);
            }
            std::string chained(count * ds, '\0');
            hasher.HashBlocks(ByteChain(Cut(AsBytes(bytes), cuts)),
                              AsMutableBytes(&chained));
            ASSERT_EQ(chained, want)
                << HashAlgorithmName(algorithm) << " salt " << salt_size
                << " block " << block_size << " cut " << cut;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, BlockHasherTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Fallback" : "MultiBuffer";
                         });

// The two-lane kernel against BoringSSL's one-lane compression function, with
// different states and data in each lane.
TEST(Sha256CompressX2Test, MatchesBoringSslPerLane) {
  if (!Sha256X2Available()) GTEST_SKIP() << "no SHA-NI";
  for (size_t blocks : {1, 2, 3, 64}) {
    const std::string a = RandomBytes(64 * blocks + 1, 10 + blocks);
    const std::string b = RandomBytes(64 * blocks, 20 + blocks);
    Sha256State state_a;
    Sha256State state_b;
    for (int i = 0; i < 8; ++i) {
      state_a.h[i] = 0x01010101u * i + blocks;
      state_b.h[i] = 0x9e3779b9u * (i + 1);
    }
    uint32_t expect_a[8];
    uint32_t expect_b[8];
    std::copy(state_a.h, state_a.h + 8, expect_a);
    std::copy(state_b.h, state_b.h + 8, expect_b);
    SHA256_TransformBlocks(expect_a, AsBytes(a).data() + 1, blocks);
    SHA256_TransformBlocks(expect_b, AsBytes(b).data(), blocks);
    Sha256CompressX2(&state_a, &state_b, AsBytes(a).data() + 1,
                     AsBytes(b).data(), blocks);
    EXPECT_TRUE(std::equal(expect_a, expect_a + 8, state_a.h)) << blocks;
    EXPECT_TRUE(std::equal(expect_b, expect_b + 8, state_b.h)) << blocks;
  }
}

// Where the kernel reports SHA-NI, the fast path must be the one that runs,
// or the tests above would only ever check the fallback.
TEST(Sha256X2AvailableTest, AgreesWithTheKernelsCpuFlags) {
  EXPECT_EQ(Sha256X2Available(), CpuInfoLists("sha_ni"));
  DisableSha256X2ForTesting(true);
  EXPECT_FALSE(Sha256X2Available());
  DisableSha256X2ForTesting(false);
}

// The four-lane kernel against BoringSSL's SHA-512 block transform, with
// different states, data and alignments in each lane.
TEST(Sha512CompressX4Test, MatchesBoringSslPerLane) {
  if (!Sha512X4Available()) GTEST_SKIP() << "no AVX2";
  for (size_t blocks : {1, 2, 3, 32}) {
    std::string data[4];
    Sha512State states[4];
    SHA512_CTX expect[4];
    for (int lane = 0; lane < 4; ++lane) {
      data[lane] = RandomBytes(128 * blocks + lane, 30 + 4 * blocks + lane);
      SHA512_Init(&expect[lane]);
      for (int i = 0; i < 8; ++i) {
        expect[lane].h[i] = 0x0101010101010101u * (i + lane) + blocks;
        states[lane].h[i] = expect[lane].h[i];
      }
      for (size_t b = 0; b < blocks; ++b) {
        SHA512_Transform(&expect[lane],
                         AsBytes(data[lane]).data() + lane + 128 * b);
      }
    }
    Sha512State* const lanes[4] = {&states[0], &states[1], &states[2],
                                   &states[3]};
    const uint8_t* const in[4] = {
        AsBytes(data[0]).data(), AsBytes(data[1]).data() + 1,
        AsBytes(data[2]).data() + 2, AsBytes(data[3]).data() + 3};
    Sha512CompressX4(lanes, in, blocks);
    for (int lane = 0; lane < 4; ++lane) {
      EXPECT_TRUE(
          std::equal(expect[lane].h, expect[lane].h + 8, states[lane].h))
          << "lane " << lane << ", " << blocks << " blocks";
    }
  }
}

TEST(Sha512X4AvailableTest, AgreesWithTheKernelsCpuFlags) {
  EXPECT_EQ(Sha512X4Available(), CpuInfoLists("avx2"));
  DisableSha512X4ForTesting(true);
  EXPECT_FALSE(Sha512X4Available());
  DisableSha512X4ForTesting(false);
}

}  // namespace
}  // namespace verity
