// Implements the test blobs; a failure to build one is a bug in the test.

#include "lib/testing/test_blob.h"

#include <cstdlib>
#include <random>
#include <utility>

namespace verity {

std::string RandomBytes(uint64_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string data(size, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  return data;
}

std::string MakeData(uint64_t size, uint64_t seed) {
  std::string data(size, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (char& c : data) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    c = static_cast<char>((x * 0x2545F4914F6CDD1Dull) >> 56);
  }
  return data;
}

TestBlob MakeTestBlob(std::string data, const MerkleParams& params) {
  TestBlob blob;
  blob.data = std::move(data);
  absl::StatusOr<MerkleTree> tree = BuildMerkleTree(params, AsBytes(blob.data));
  if (!tree.ok()) std::abort();  // a bug in the test itself
  blob.tree = *std::move(tree);
  blob.digest = {params.hash_algorithm, blob.tree.digest};
  blob.digest_text = blob.digest.ToString();
  return blob;
}

TestBlob MakeRandomTestBlob(uint64_t size, const MerkleParams& params,
                            uint32_t seed) {
  return MakeTestBlob(RandomBytes(size, seed), params);
}

MerkleParams TestParams(HashAlgorithm algorithm, uint32_t block_size,
                        std::string salt) {
  MerkleParams params;
  params.hash_algorithm = algorithm;
  params.block_size = block_size;
  params.salt = std::move(salt);
  return params;
}

}  // namespace verity
