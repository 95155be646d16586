// The latency of a 4 KiB read that verityd repairs from FEC, against a clean
// one, through the SDK (a ReadSmall call once it holds the tree). For each
// sample, one block of a different RS group: a clean read, then a flipped
// byte written into the stored data file (as a failing disk would return
// it), then the same read, which the server repairs (reading the block's
// whole group, rebuilding, checking and writing back with fsync) before it
// answers, then a third read, clean again. Without --data_file (a store it
// cannot write, such as S3) the caller has damaged blocks 1..samples already,
// and the clean read of each sample is of an undamaged block in a slab of
// its own (--clean_stride_blocks), read first too. Prints one line per kind:
// median, 90th percentile and worst, in microseconds. Reports figures; never
// fails on a goal. Run by tests/bench/fec_store_bench.sh and
// tests/bench/fec_s3_bench.sh.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "verity/client.h"

ABSL_FLAG(std::string, server, "", "verityd's address");
ABSL_FLAG(std::string, digest, "", "the blob, stored with an FEC area");
ABSL_FLAG(std::string, data_file, "",
          "the blob's data file in the store; empty: blocks 1..samples are "
          "damaged already");
ABSL_FLAG(uint64_t, clean_stride_blocks, 1024,
          "without --data_file, sample i's clean read is of block i * this + "
          "this / 2");
ABSL_FLAG(int, samples, 50, "blocks to corrupt, each in its own RS group");
ABSL_FLAG(uint32_t, block_size, 4096, "the blob's block size");

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "fec_read_bench: %s\n", what.c_str());
  return 1;
}

// Median, 90th percentile and worst of `us`, in microseconds.
std::string Summary(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return absl::StrFormat("median %.0f us, p90 %.0f us, worst %.0f us",
                         us[us.size() / 2], us[us.size() * 9 / 10], us.back());
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  verity::sdk::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  absl::StatusOr<std::unique_ptr<verity::sdk::Client>> client =
      verity::sdk::Client::Create(options);
  if (!client.ok()) return Fail(client.status().ToString());
  absl::StatusOr<verity::sdk::Digest> digest =
      verity::sdk::Digest::Parse(absl::GetFlag(FLAGS_digest));
  if (!digest.ok()) return Fail(digest.status().ToString());
  const bool damaged = absl::GetFlag(FLAGS_data_file).empty();
  const int fd =
      damaged ? -1 : open(absl::GetFlag(FLAGS_data_file).c_str(), O_RDWR);
  if (!damaged && fd < 0) return Fail("cannot open --data_file");
  const uint64_t stride = absl::GetFlag(FLAGS_clean_stride_blocks);
  const uint64_t bs = absl::GetFlag(FLAGS_block_size);
  const auto read = [&](uint64_t block,
                        double* us) -> absl::StatusOr<std::string> {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::string> bytes =
        (*client)->ReadRange(*digest, block * bs, bs);
    *us = absl::ToDoubleMicroseconds(absl::Now() - start);
    return bytes;
  };
  double ignored;
  // The tree, verified once: from here on every read is one ReadSmall call.
  for (int i = 0; i < 3; ++i) {
    if (!read(0, &ignored).ok()) return Fail("warm-up read failed");
  }
  std::vector<double> clean, repaired, after;
  // Consecutive blocks lie in consecutive RS groups (a blob of n blocks has
  // about n / 253 of them with 2 roots): distinct groups for every sample.
  for (int i = 1; i <= absl::GetFlag(FLAGS_samples); ++i) {
    const uint64_t block = static_cast<uint64_t>(i);
    double us;
    absl::StatusOr<std::string> good =
        read(damaged ? i * stride + stride / 2 : block, &us);
    if (!good.ok()) return Fail(good.status().ToString());
    clean.push_back(us);
    if (!damaged) {
      const char flipped = static_cast<char>((*good)[17] ^ 0x5a);
      if (pwrite(fd, &flipped, 1, static_cast<off_t>(block * bs + 17)) != 1) {
        return Fail("cannot corrupt the data file");
      }
    }
    // The SDK verified what it returns: a wrong repair cannot pass.
    absl::StatusOr<std::string> fixed = read(block, &us);
    if (!fixed.ok()) return Fail(fixed.status().ToString());
    if (!damaged && *fixed != *good) {
      return Fail("a repaired read returned other bytes");
    }
    repaired.push_back(us);
    if (!read(block, &us).ok()) return Fail("the read after the repair failed");
    after.push_back(us);
  }
  if (fd >= 0) close(fd);
  std::printf("clean: %s\n", Summary(clean).c_str());
  std::printf("repaired: %s\n", Summary(repaired).c_str());
  std::printf("after: %s\n", Summary(after).c_str());
  return 0;
}
