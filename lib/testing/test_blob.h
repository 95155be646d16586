// Test support: blobs with their Merkle trees, built by MerkleBuilder, for the
// tests of lib/, the server and the client.

#ifndef VERITYD_LIB_TESTING_TEST_BLOB_H_
#define VERITYD_LIB_TESTING_TEST_BLOB_H_

#include <cstdint>
#include <string>

#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_builder.h"
#include "lib/tree/merkle_params.h"

namespace verity {

// `size` pseudo-random bytes from std::mt19937 seeded with `seed`.
std::string RandomBytes(uint64_t size, uint32_t seed);

// `size` deterministic bytes (xorshift64*), different for every seed; faster
// than RandomBytes for large test data.
std::string MakeData(uint64_t size, uint64_t seed);

// Plain value.
struct TestBlob {
  std::string data;
  MerkleTree tree;
  ParsedDigest digest;
  std::string digest_text;  // digest.ToString()
};

// `data` as a blob with `params`.
TestBlob MakeTestBlob(std::string data, const MerkleParams& params);

// `size` pseudo-random bytes from `seed` as a blob with `params`.
TestBlob MakeRandomTestBlob(uint64_t size, const MerkleParams& params,
                            uint32_t seed = 1);

MerkleParams TestParams(HashAlgorithm algorithm, uint32_t block_size,
                        std::string salt = "");

}  // namespace verity

#endif  // VERITYD_LIB_TESTING_TEST_BLOB_H_
