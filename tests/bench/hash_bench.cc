// Cost of hashing one fs-verity block with the project's BoringSSL: the unit
// every verification decision is priced in. Run: bazel run -c opt
// //tests/bench:hash_bench
#include <benchmark/benchmark.h>

#include <string>

#include "lib/block_hasher.h"
#include "lib/merkle_params.h"

namespace verity {
namespace {

void BM_HashBlock(benchmark::State& state, HashAlgorithm algorithm,
                  std::string salt) {
  MerkleParams params;
  params.hash_algorithm = algorithm;
  params.block_size = static_cast<uint32_t>(state.range(0));
  params.salt = std::move(salt);
  const BlockHasher hasher(params);
  const std::string block(params.block_size, 'x');
  uint8_t digest[kMaxDigestSize];
  for (auto _ : state) {
    hasher.HashBlock(AsBytes(block),
                     absl::MakeSpan(digest, DigestSize(algorithm)));
    benchmark::DoNotOptimize(digest);
  }
  state.SetBytesProcessed(state.iterations() * params.block_size);
}

BENCHMARK_CAPTURE(BM_HashBlock, sha256, HashAlgorithm::kSha256, "")
    ->Arg(1024)
    ->Arg(4096)
    ->Arg(65536);
BENCHMARK_CAPTURE(BM_HashBlock, sha256_salted, HashAlgorithm::kSha256, "salt")
    ->Arg(4096);
BENCHMARK_CAPTURE(BM_HashBlock, sha512, HashAlgorithm::kSha512, "")->Arg(4096);

}  // namespace
}  // namespace verity
