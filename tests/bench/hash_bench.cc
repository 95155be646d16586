// Cost of hashing fs-verity blocks, the unit every verification decision is
// priced in: BoringSSL one block at a time (HashBlock) against the
// multi-buffer paths (HashBlocks, 1, 2, 4 and 8 blocks per call: SHA-256 two
// lanes with SHA-NI, SHA-512 four lanes with AVX2), with and without a salt,
// for block sizes 1 KiB to 64 KiB. per_block is the time per block.
// Run: bazel run -c opt //tests/bench:hash_bench

#include <benchmark/benchmark.h>

#include <string>

#include "lib/hash/sha256_x2.h"
#include "lib/hash/sha512_x4.h"
#include "lib/tree/block_hasher.h"
#include "lib/tree/merkle_params.h"

namespace verity {
namespace {

MerkleParams Params(HashAlgorithm algorithm, int64_t block_size, bool salted) {
  MerkleParams params;
  params.hash_algorithm = algorithm;
  params.block_size = static_cast<uint32_t>(block_size);
  if (salted) params.salt = "0123456789abcdef0123456789abcdef";  // 32 bytes
  return params;
}

void Report(benchmark::State& state, uint32_t block_size, int64_t blocks) {
  state.SetBytesProcessed(state.iterations() * blocks * block_size);
  // blocks * iterations / seconds, inverted: the time per block.
  state.counters["per_block"] =
      benchmark::Counter(static_cast<double>(blocks),
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

// BoringSSL, one block per call: what every path did before HashBlocks.
void BM_OneAtATime(benchmark::State& state, HashAlgorithm algorithm,
                   bool salted) {
  const BlockHasher hasher(Params(algorithm, state.range(0), salted));
  const std::string block(hasher.block_size(), 'x');
  uint8_t digest[kMaxDigestSize];
  for (auto _ : state) {
    hasher.HashBlock(AsBytes(block),
                     absl::MakeSpan(digest, hasher.digest_size()));
    benchmark::DoNotOptimize(digest);
  }
  Report(state, hasher.block_size(), 1);
}

// HashBlocks over range(1) consecutive blocks per call.
void BM_HashBlocks(benchmark::State& state, HashAlgorithm algorithm,
                   bool salted) {
  const BlockHasher hasher(Params(algorithm, state.range(0), salted));
  const int64_t blocks = state.range(1);
  const std::string data(blocks * hasher.block_size(), 'x');
  std::string digests(blocks * hasher.digest_size(), '\0');
  for (auto _ : state) {
    hasher.HashBlocks(AsBytes(data), AsMutableBytes(&digests));
    benchmark::DoNotOptimize(digests.data());
  }
  Report(state, hasher.block_size(), blocks);
}

void BlockSizes(benchmark::internal::Benchmark* b) {
  for (int64_t size = 1024; size <= 65536; size *= 4) b->Arg(size);
}

void BlockSizesAndCounts(benchmark::internal::Benchmark* b) {
  for (int64_t size = 1024; size <= 65536; size *= 4) {
    for (int64_t count : {1, 2, 4, 8}) b->Args({size, count});
  }
}

BENCHMARK_CAPTURE(BM_OneAtATime, sha256, HashAlgorithm::kSha256, false)
    ->Apply(BlockSizes);
BENCHMARK_CAPTURE(BM_OneAtATime, sha256_salted, HashAlgorithm::kSha256, true)
    ->Apply(BlockSizes);
BENCHMARK_CAPTURE(BM_HashBlocks, sha256, HashAlgorithm::kSha256, false)
    ->Apply(BlockSizesAndCounts);
BENCHMARK_CAPTURE(BM_HashBlocks, sha256_salted, HashAlgorithm::kSha256, true)
    ->Apply(BlockSizesAndCounts);
BENCHMARK_CAPTURE(BM_OneAtATime, sha512, HashAlgorithm::kSha512, false)
    ->Apply(BlockSizes);
BENCHMARK_CAPTURE(BM_HashBlocks, sha512, HashAlgorithm::kSha512, false)
    ->Apply(BlockSizesAndCounts);

}  // namespace
}  // namespace verity

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext(
      "sha256_x2", verity::Sha256X2Available() ? "SHA-NI two lanes" : "off");
  benchmark::AddCustomContext(
      "sha512_x4", verity::Sha512X4Available() ? "AVX2 four lanes" : "off");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
