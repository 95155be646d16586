// dm-verity FEC encoding speed on one thread: one RS group (255 - roots
// blocks of 4 KiB, distinct random data) per iteration, parity interleaved as
// the FEC area holds it; bytes/s counts the data covered. Roots 2 (the
// default) to 24; then a whole 1 GiB image in memory.
// Run: bazel run -c opt //tests/bench:fec_bench

#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lib/dm_verity_fec.h"

namespace verity {
namespace {

constexpr size_t kBlockSize = 4096;

void BM_EncodeGroup(benchmark::State& state) {
  const int roots = static_cast<int>(state.range(0));
  absl::StatusOr<FecCodec> codec = FecCodec::Create(roots);
  if (!codec.ok()) {
    state.SkipWithError("bad roots");
    return;
  }
  const int k = codec->k();
  std::vector<uint8_t> data(k * kBlockSize);
  std::mt19937 random(roots);
  for (uint8_t& byte : data) byte = static_cast<uint8_t>(random());
  std::vector<const uint8_t*> blocks(k);
  for (int j = 0; j < k; ++j) blocks[j] = &data[j * kBlockSize];
  std::vector<uint8_t> parity(kBlockSize * roots);
  for (auto _ : state) {
    codec->EncodeGroup(blocks, kBlockSize, absl::MakeSpan(parity));
    benchmark::DoNotOptimize(parity.data());
  }
  state.SetBytesProcessed(state.iterations() * k * kBlockSize);
}
BENCHMARK(BM_EncodeGroup)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(24);

// A whole 1 GiB image in memory, far beyond the caches: each group gathers
// blocks `rounds` apart, as the FEC area's layout has it.
void BM_ComputeFec1GiB(benchmark::State& state) {
  const int roots = static_cast<int>(state.range(0));
  const uint64_t blocks = (uint64_t{1} << 30) / kBlockSize;
  std::vector<uint8_t> image(blocks * kBlockSize);
  std::mt19937_64 random(1);
  for (size_t i = 0; i < image.size(); i += 8) {
    const uint64_t word = random();
    std::memcpy(&image[i], &word, 8);
  }
  for (auto _ : state) {
    absl::StatusOr<std::string> fec = ComputeFec(
        roots, kBlockSize, blocks,
        [&](uint64_t i) -> absl::StatusOr<absl::Span<const uint8_t>> {
          return absl::MakeConstSpan(&image[i * kBlockSize], kBlockSize);
        });
    benchmark::DoNotOptimize(fec->data());
  }
  state.SetBytesProcessed(state.iterations() * image.size());
}
BENCHMARK(BM_ComputeFec1GiB)->Arg(2)->Arg(24)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace verity

BENCHMARK_MAIN();
