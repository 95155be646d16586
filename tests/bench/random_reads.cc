// Cold random reads through the SDK: one client, one thread, one verified
// ReadRange per offset, in the order given, with nothing read before (no
// warm-up: the first read fetches the blob's tree, as a mount's first read
// does). What `verity mount`'s 4 KiB random reads are compared with in
// mount_bench.sh, over the same offsets.
//   random_reads --server=H:P --digest=D --offsets=FILE [--length=4096]
// FILE holds one byte offset per line. Prints "p50_us=X p99_us=X reads=N".
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "verity/client.h"

ABSL_FLAG(std::string, server, "", "verityd address");
ABSL_FLAG(std::string, digest, "", "blob to read");
ABSL_FLAG(std::string, offsets, "", "file of byte offsets, one per line");
ABSL_FLAG(uint64_t, length, 4096, "bytes per read");

namespace verity::bench {
namespace {

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(p * (values.size() - 1))];
}

int Run() {
  std::vector<uint64_t> offsets;
  std::ifstream in(absl::GetFlag(FLAGS_offsets));
  for (uint64_t offset; in >> offset;) offsets.push_back(offset);
  absl::StatusOr<sdk::Digest> digest =
      sdk::Digest::Parse(absl::GetFlag(FLAGS_digest));
  if (offsets.empty() || !digest.ok()) {
    std::fprintf(stderr, "random_reads: give --digest and --offsets\n");
    return 2;
  }
  sdk::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  absl::StatusOr<std::unique_ptr<sdk::Client>> client =
      sdk::Client::Create(options);
  if (!client.ok()) {
    std::fprintf(stderr, "random_reads: %s\n",
                 client.status().ToString().c_str());
    return 1;
  }
  const uint64_t length = absl::GetFlag(FLAGS_length);
  std::vector<double> micros;
  for (const uint64_t offset : offsets) {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::string> bytes =
        (*client)->ReadRange(*digest, offset, length, sdk::FetchOptions());
    if (!bytes.ok() || bytes->size() != length) {
      std::fprintf(stderr, "random_reads: read at %llu failed: %s\n",
                   static_cast<unsigned long long>(offset),
                   bytes.status().ToString().c_str());
      return 1;
    }
    micros.push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
  }
  std::printf("p50_us=%.0f p99_us=%.0f reads=%zu\n", Percentile(micros, 0.5),
              Percentile(micros, 0.99), micros.size());
  return 0;
}

}  // namespace
}  // namespace verity::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return verity::bench::Run();
}
