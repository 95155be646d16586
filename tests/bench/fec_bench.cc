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

#include "lib/fec/dm_verity_fec.h"

namespace verity {
namespace {

constexpr size_t kBlockSize = 4096;

// One group of `codec`'s k random blocks, and its parity.
struct Group {
  Group(const FecCodec& codec, uint32_t seed)
      : data(codec.k() * kBlockSize),
        blocks(codec.k()),
        parity(kBlockSize * codec.roots()) {
    std::mt19937 random(seed);
    for (uint8_t& byte : data) byte = static_cast<uint8_t>(random());
    for (int j = 0; j < codec.k(); ++j) blocks[j] = &data[j * kBlockSize];
    codec.EncodeGroup(blocks, kBlockSize, absl::MakeSpan(parity), scratch);
  }

  std::vector<uint8_t> data;
  std::vector<const uint8_t*> blocks;
  std::vector<uint8_t> parity;
  std::vector<uint8_t> scratch;
};

void BM_EncodeGroup(benchmark::State& state) {
  const int roots = static_cast<int>(state.range(0));
  absl::StatusOr<const FecCodec*> codec = FecCodec::Create(roots);
  if (!codec.ok()) {
    state.SkipWithError("bad roots");
    return;
  }
  Group group(**codec, roots);
  for (auto _ : state) {
    (*codec)->EncodeGroup(group.blocks, kBlockSize,
                          absl::MakeSpan(group.parity), group.scratch);
    benchmark::DoNotOptimize(group.parity.data());
  }
  state.SetBytesProcessed(state.iterations() * (*codec)->k() * kBlockSize);
}
BENCHMARK(BM_EncodeGroup)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Arg(24);

// A repair of `erasures` blocks of one group (the tree located them): one
// encoding pass over the survivors and a small inversion.
void BM_RepairGroup(benchmark::State& state) {
  const int roots = static_cast<int>(state.range(0));
  const int erasures = static_cast<int>(state.range(1));
  absl::StatusOr<const FecCodec*> codec = FecCodec::Create(roots);
  if (!codec.ok()) {
    state.SkipWithError("bad roots");
    return;
  }
  const int k = (*codec)->k();
  const Group group(**codec, roots);
  std::vector<int> erased;
  for (int i = 0; i < erasures; ++i) erased.push_back(i * (k / erasures));
  std::vector<uint8_t> rebuilt(kBlockSize * erasures);
  std::vector<uint8_t*> out;
  for (int i = 0; i < erasures; ++i) out.push_back(&rebuilt[i * kBlockSize]);
  for (auto _ : state) {
    if (!(*codec)
             ->RepairGroup(group.blocks, erased, group.parity, kBlockSize, out)
             .ok()) {
      state.SkipWithError("repair failed");
      return;
    }
    benchmark::DoNotOptimize(rebuilt.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RepairGroup)
    ->Args({2, 1})
    ->Args({2, 2})
    ->Args({24, 1})
    ->Args({24, 24});

// 1 GiB of random blocks.
std::vector<uint8_t> RandomImage() {
  std::vector<uint8_t> image(size_t{1} << 30);
  std::mt19937_64 random(1);
  for (size_t i = 0; i < image.size(); i += 8) {
    const uint64_t word = random();
    std::memcpy(&image[i], &word, 8);
  }
  return image;
}

// A whole 1 GiB image in memory, far beyond the caches, encoded as a Put
// does: windows of groups, each read as k runs of blocks `rounds` apart
// (copied out of the image, as a file's preads would be).
void BM_EncodeFec1GiB(benchmark::State& state) {
  const int roots = static_cast<int>(state.range(0));
  const std::vector<uint8_t> image = RandomImage();
  const uint64_t blocks = image.size() / kBlockSize;
  // The parity goes to memory faulted in before the timing starts (a Put
  // writes it to a file).
  std::string fec;
  fec.reserve(FecSize(blocks, roots, kBlockSize));
  for (auto _ : state) {
    fec.clear();
    const absl::Status status = EncodeFec(
        roots, kBlockSize, blocks,
        [&](uint64_t first, uint64_t count, absl::Span<uint8_t> out) {
          std::memcpy(out.data(), &image[first * kBlockSize], out.size());
          return absl::OkStatus();
        },
        [&](absl::Span<const uint8_t> bytes) {
          fec.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
          return absl::OkStatus();
        });
    if (!status.ok()) state.SkipWithError("EncodeFec failed");
    benchmark::DoNotOptimize(fec.data());
  }
  state.SetBytesProcessed(state.iterations() * image.size());
}
BENCHMARK(BM_EncodeFec1GiB)->Arg(2)->Arg(24)->Unit(benchmark::kMillisecond);

// The same image streamed in 1 MiB pieces, as a Put's messages arrive: each
// block added to its group's parity at once.
void BM_StreamFec1GiB(benchmark::State& state) {
  const int roots = static_cast<int>(state.range(0));
  const std::vector<uint8_t> image = RandomImage();
  const uint64_t blocks = image.size() / kBlockSize;
  for (auto _ : state) {
    absl::StatusOr<FecStreamEncoder> stream =
        FecStreamEncoder::Create(roots, kBlockSize, blocks);
    for (size_t at = 0; at < image.size(); at += 1 << 20) {
      if (!stream->Update(absl::MakeConstSpan(&image[at], 1 << 20)).ok()) {
        state.SkipWithError("Update failed");
      }
    }
    absl::StatusOr<std::string> fec = stream->Finish();
    benchmark::DoNotOptimize(fec->data());
  }
  state.SetBytesProcessed(state.iterations() * image.size());
}
BENCHMARK(BM_StreamFec1GiB)->Arg(2)->Arg(24)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace verity

BENCHMARK_MAIN();
