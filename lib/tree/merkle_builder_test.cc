// Checks both tree builders against the reference `fsverity digest`: the
// printed digest, the Merkle tree bytes and the descriptor must all match, on
// the multi-buffer hashing paths and on BoringSSL alone.

#include "lib/tree/merkle_builder.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/hash/sha256_x2.h"
#include "lib/hash/sha512_x4.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"

namespace verity {
namespace {

struct OracleCase {
  HashAlgorithm algorithm;
  uint32_t block_size;
  size_t salt_size;
  uint64_t data_size;
};

std::string CaseName(const OracleCase& c) {
  return absl::StrCat(HashAlgorithmName(c.algorithm), "_block", c.block_size,
                      "_salt", c.salt_size, "_size", c.data_size);
}

// Keeps gtest from printing the case as raw bytes.
void PrintTo(const OracleCase& c, std::ostream* os) { *os << CaseName(c); }

MerkleParams ParamsFor(const OracleCase& c) {
  MerkleParams params;
  params.hash_algorithm = c.algorithm;
  params.block_size = c.block_size;
  params.salt = MakeData(c.salt_size, 99);
  return params;
}

// The sizes where the tree's shape changes, for one algorithm and block.
std::vector<uint64_t> BoundarySizes(HashAlgorithm algorithm, uint64_t block) {
  const uint64_t hpb = block / DigestSize(algorithm);
  std::vector<uint64_t> sizes = {0,     1,         block - 1,
                                 block, block + 1, 3 * block + 5};
  // Only where the data stays small: the logic does not depend on scale.
  if (hpb * block <= (uint64_t{1} << 20)) {
    sizes.insert(sizes.end(), {hpb * block - 1, hpb * block, hpb * block + 1});
  }
  if (hpb * hpb * block <= (uint64_t{2} << 20)) {
    sizes.push_back(hpb * hpb * block + 1);  // three levels
  }
  return sizes;
}

std::vector<OracleCase> AllCases() {
  std::vector<OracleCase> cases;
  for (HashAlgorithm algorithm :
       {HashAlgorithm::kSha256, HashAlgorithm::kSha512}) {
    for (uint32_t block : {1024u, 4096u, 65536u}) {
      for (size_t salt : {0u, 3u, 32u}) {
        for (uint64_t size : BoundarySizes(algorithm, block)) {
          cases.push_back({algorithm, block, salt, size});
        }
      }
    }
  }
  // Deep trees: two hashes per block.
  cases.push_back({HashAlgorithm::kSha256, 64, 0, 100000});
  cases.push_back({HashAlgorithm::kSha512, 128, 5, 77777});
  // A few MiB of data.
  cases.push_back({HashAlgorithm::kSha256, 4096, 3, (5 << 20) + 123});
  cases.push_back({HashAlgorithm::kSha512, 65536, 32, (3 << 20) + 1});
  cases.push_back({HashAlgorithm::kSha256, 1024, 0, (3 << 20) - 1});
  return cases;
}

// Feeds `data` in chunks of varied, odd sizes.
absl::StatusOr<MerkleTree> BuildStreaming(const MerkleParams& params,
                                          const std::string& data) {
  static constexpr size_t kChunkSizes[] = {1, 7, 4095, 70000};
  MerkleBuilder builder(params);
  size_t offset = 0;
  for (size_t i = 0; offset < data.size(); ++i) {
    const size_t n = std::min(kChunkSizes[i % 4], data.size() - offset);
    const absl::Status status =
        builder.Update(AsBytes(absl::string_view(data).substr(offset, n)));
    if (!status.ok()) return status;
    offset += n;
  }
  return builder.Finish();
}

ReadAtFn MemoryReader(const std::string& data) {
  return [&data](uint64_t offset, absl::Span<uint8_t> out) {
    if (offset > data.size() || out.size() > data.size() - offset) {
      return absl::OutOfRangeError("read past the end");
    }
    std::copy_n(data.data() + offset, out.size(), out.begin());
    return absl::OkStatus();
  };
}

class OracleTest : public testing::TestWithParam<OracleCase> {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(kFsverityPath, X_OK), 0)
        << kFsverityPath << " is required for these tests: apt-get install "
        << "fsverity";
  }

  void ExpectMatches(const MerkleTree& tree, const std::string& path,
                     const FsverityOutput& expected) {
    EXPECT_EQ(absl::StrCat(FormatDigest(tree.descriptor.hash_algorithm,
                                        AsBytes(tree.digest)),
                           " ", path),
              expected.line);
    EXPECT_TRUE(tree.tree == expected.tree)
        << "tree differs: " << tree.tree.size() << " vs "
        << expected.tree.size() << " bytes";
    const absl::StatusOr<std::string> descriptor = tree.descriptor.Serialize();
    ASSERT_TRUE(descriptor.ok()) << descriptor.status();
    EXPECT_TRUE(*descriptor == expected.descriptor) << "descriptor differs";
  }
};

TEST_P(OracleTest, BuildersMatchFsverityDigest) {
  const OracleCase& c = GetParam();
  const MerkleParams params = ParamsFor(c);
  const std::string data = MakeData(c.data_size, c.data_size);
  const absl::StatusOr<std::string> path = WriteTestFile(CaseName(c), data);
  ASSERT_TRUE(path.ok()) << path.status();
  const absl::StatusOr<FsverityOutput> expected =
      RunFsverityDigest(*path, params);
  unlink(path->c_str());
  ASSERT_TRUE(expected.ok()) << expected.status();

  const absl::Cleanup restore = [] {
    DisableSha256X2ForTesting(false);
    DisableSha512X4ForTesting(false);
  };
  for (bool fallback : {false, true}) {
    SCOPED_TRACE(fallback ? "BoringSSL only"
                          : "multi-buffer where the CPU has it");
    DisableSha256X2ForTesting(fallback);
    DisableSha512X4ForTesting(fallback);
    const absl::StatusOr<MerkleTree> streamed = BuildStreaming(params, data);
    ASSERT_TRUE(streamed.ok()) << streamed.status();
    {
      SCOPED_TRACE("streaming");
      ExpectMatches(*streamed, *path, *expected);
    }
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(absl::StrCat("parallel, threads=", threads));
      const absl::StatusOr<MerkleTree> parallel = BuildMerkleTreeParallel(
          params, data.size(), MemoryReader(data), threads);
      ASSERT_TRUE(parallel.ok()) << parallel.status();
      ExpectMatches(*parallel, *path, *expected);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fsverity, OracleTest, testing::ValuesIn(AllCases()),
    [](const testing::TestParamInfo<OracleCase>& param_info) {
      return CaseName(param_info.param);
    });

TEST(MerkleBuilderTest, EmptyDataHasZeroRootAndNoTree) {
  MerkleBuilder builder(MerkleParams{});
  const absl::StatusOr<MerkleTree> tree = builder.Finish();
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->descriptor.root_hash, std::string(32, '\0'));
  EXPECT_TRUE(tree->tree.empty());
  // The well-known digest of an empty file with default parameters.
  EXPECT_EQ(FormatDigest(HashAlgorithm::kSha256, AsBytes(tree->digest)),
            "sha256:3d248ca542a24fc62d1c43b916eae5016878e2533c88238480b26128"
            "a1f1af95");
}

TEST(MerkleBuilderTest, InvalidParamsAreReported) {
  MerkleParams params;
  params.block_size = 1000;
  MerkleBuilder builder(params);
  EXPECT_EQ(builder.Update(AsBytes("abc")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(builder.Finish().status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildMerkleTreeParallel(params, 3, MemoryReader("abc"), 2)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MerkleBuilderTest, UseAfterFinishFails) {
  MerkleBuilder builder(MerkleParams{});
  ASSERT_TRUE(builder.Update(AsBytes("abc")).ok());
  ASSERT_TRUE(builder.Finish().ok());
  EXPECT_EQ(builder.Update(AsBytes("d")).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(builder.Finish().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(MerkleBuilderTest, ParallelPropagatesReadErrors) {
  const std::string data = MakeData(1 << 20, 1);
  const ReadAtFn failing = [&data](uint64_t offset, absl::Span<uint8_t> out) {
    if (offset + out.size() > data.size() / 2) {
      return absl::DataLossError("disk on fire");
    }
    return MemoryReader(data)(offset, out);
  };
  for (int threads : {1, 2, 4}) {
    const absl::StatusOr<MerkleTree> tree =
        BuildMerkleTreeParallel(MerkleParams{}, data.size(), failing, threads);
    EXPECT_EQ(tree.status().code(), absl::StatusCode::kDataLoss) << threads;
  }
}

TEST(MerkleBuilderTest, ParallelRejectsHostileSizes) {
  const absl::StatusOr<MerkleTree> tree = BuildMerkleTreeParallel(
      MerkleParams{}, ~uint64_t{0}, MemoryReader(""), 2);
  EXPECT_EQ(tree.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MerkleBuilderTest, ManyThreadsOnFewBlocks) {
  const std::string data = MakeData(10000, 2);
  const absl::StatusOr<MerkleTree> one = BuildMerkleTreeParallel(
      MerkleParams{}, data.size(), MemoryReader(data), 1);
  const absl::StatusOr<MerkleTree> many = BuildMerkleTreeParallel(
      MerkleParams{}, data.size(), MemoryReader(data), 1000);
  ASSERT_TRUE(one.ok() && many.ok());
  EXPECT_EQ(one->digest, many->digest);
  EXPECT_EQ(one->tree, many->tree);
}

}  // namespace
}  // namespace verity
