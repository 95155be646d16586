// Load generator for small reads and for the server's Read dispatch: groups
// of clients, each a thread with its own connection, reading one blob with a
// priority class, and per-group throughput and latency. --target chooses what
// is read and how (load_target.h): verityd's Read stream with the client not
// verifying (it asks for no tree blocks: the server's verification and
// dispatch are what is measured), verityd through the SDK with the client
// verifying each read against its cached tree, or the bare gRPC echo server
// (echo_server.cc) as a unary call or a one-message stream, all under the
// same harness.
//   dispatch_load [--target=verityd] --server=H:P [--digest=D]
//                 [--echo_bytes=N] [--seconds=10] [--warmup_seconds=2]
//                 --load=CLASS:KIND:SIZE:CLIENTS[:RATE][,...]
// CLASS is none|rt|be|idle (verityd targets; the echo server ignores it). KIND
// is random (block-aligned random offsets, one synchronous request at a time:
// the 4 KiB synchronous-read analog), stream (sequential SIZE reads through
// the blob, wrapping, each client starting at a different offset: the
// readahead analog) or scan (the same access pattern, for a background scan).
// SIZE is in bytes, a multiple of the blob's block size (4096 for echo).
// RATE, if given, is requests per second per client on a fixed schedule (an
// open loop, like an application's reads): latency is then counted from each
// request's scheduled start, so a slow reply also charges the requests it
// delays. Without RATE a client sends the next request when one ends.
// Give every group in one --load (a repeated --load replaces the earlier one,
// as absl list flags do). Every client connects (and a verifying one warms
// its tree cache) before the clock starts; then all groups run at once.
// Requests that start after the warm-up and end within the measured --seconds
// count. Prints one line per group:
//   load class=rt kind=random size=4096 clients=8 requests=N reads_s=X
//   mib_s=X p50_us=X p99_us=X p999_us=X errors=N refused=N retries=N
//   tree_blocks=N
// (on one line): errors count failed reads, warm-up included; refused, those
// of them that were RESOURCE_EXHAUSTED (verityd's --max_call_rate); retries
// and tree_blocks, the SDK's retried streams and tree blocks received after
// its warm-up (0 for the other targets). Exits 1 if any read failed or
// returned the wrong number of bytes, warm-up included.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/verity/v1/verity.pb.h"
#include "tests/bench/load_target.h"

ABSL_FLAG(std::string, target, "verityd",
          "verityd (Read stream, client not verifying), verityd_small "
          "(ReadSmall, client not verifying), verityd_verified (the SDK, "
          "verifying with its tree cached: ReadSmall for ranges that fit), "
          "echo_unary or echo_stream (echo_server)");
ABSL_FLAG(std::string, server, "127.0.0.1:50051", "the server's address");
ABSL_FLAG(std::string, digest, "", "verityd targets: the blob to read");
ABSL_FLAG(uint64_t, echo_bytes, uint64_t{256} << 20,
          "echo targets: the server's buffer size (its --bytes)");
ABSL_FLAG(int, seconds, 10, "measured time");
ABSL_FLAG(int, warmup_seconds, 2, "time before measuring (not recorded)");
ABSL_FLAG(std::vector<std::string>, load, {},
          "comma-separated CLASS:KIND:SIZE:CLIENTS[:RATE] groups, all run at "
          "once; CLASS none|rt|be|idle, KIND random|stream|scan, SIZE in "
          "bytes, RATE requests/s per client (default: back to back)");

namespace verity::bench {
namespace {

enum class Kind { kRandom, kStream, kScan };

struct Load {
  std::string class_name;  // as given: none, rt, be, idle
  std::string kind_name;   // as given: random, stream, scan
  v1::PriorityClass priority_class = v1::PRIORITY_CLASS_NONE;
  Kind kind = Kind::kRandom;
  uint64_t size = 0;  // bytes per request
  int clients = 0;
  double rate = 0;  // requests per second per client; 0: back to back
};

// What one client saw in the measured window.
struct ClientResult {
  std::vector<int64_t> latencies_ns;
  uint64_t bytes = 0;
  uint64_t errors = 0;   // warm-up included
  uint64_t refused = 0;  // of the errors, RESOURCE_EXHAUSTED
  // The SDK's, since its warm-up: retried streams, tree blocks received.
  uint64_t retries = 0;
  uint64_t tree_blocks = 0;
};

absl::StatusOr<Load> ParseLoad(const std::string& text) {
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  Load load;
  if ((parts.size() != 4 && parts.size() != 5) ||
      !absl::SimpleAtoi(parts[2], &load.size) ||
      !absl::SimpleAtoi(parts[3], &load.clients) || load.size == 0 ||
      load.clients <= 0 ||
      (parts.size() == 5 &&
       (!absl::SimpleAtod(parts[4], &load.rate) || load.rate <= 0))) {
    return absl::InvalidArgumentError("want CLASS:KIND:SIZE:CLIENTS[:RATE]: " +
                                      text);
  }
  load.class_name = parts[0];
  load.kind_name = parts[1];
  static const std::pair<const char*, v1::PriorityClass> kClasses[] = {
      {"none", v1::PRIORITY_CLASS_NONE},
      {"rt", v1::PRIORITY_CLASS_RT},
      {"be", v1::PRIORITY_CLASS_BE},
      {"idle", v1::PRIORITY_CLASS_IDLE}};
  static const std::pair<const char*, Kind> kKinds[] = {
      {"random", Kind::kRandom},
      {"stream", Kind::kStream},
      {"scan", Kind::kScan}};
  auto class_it = std::find_if(std::begin(kClasses), std::end(kClasses),
                               [&](auto& c) { return parts[0] == c.first; });
  auto kind_it = std::find_if(std::begin(kKinds), std::end(kKinds),
                              [&](auto& k) { return parts[1] == k.first; });
  if (class_it == std::end(kClasses) || kind_it == std::end(kKinds)) {
    return absl::InvalidArgumentError("unknown class or kind: " + text);
  }
  load.priority_class = class_it->second;
  load.kind = kind_it->second;
  return load;
}

// Chooses each request's offset: random block-aligned, or sequential from a
// per-client start, wrapping at the end of the blob.
class OffsetPicker {
 public:
  OffsetPicker(const Load& load, const BlobShape& shape, int client)
      : kind_(load.kind),
        size_(load.size),
        last_start_(shape.data_size - load.size),
        block_size_(shape.block_size),
        random_(std::random_device{}()) {
    next_ = shape.data_size / load.clients * client / load.size * load.size;
  }

  uint64_t Next() {
    if (kind_ == Kind::kRandom) {
      std::uniform_int_distribution<uint64_t> block(0,
                                                    last_start_ / block_size_);
      return block(random_) * block_size_;
    }
    if (next_ > last_start_) next_ = 0;
    const uint64_t offset = next_;
    next_ += size_;
    return offset;
  }

 private:
  const Kind kind_;
  const uint64_t size_;
  const uint64_t last_start_;
  const uint64_t block_size_;
  std::mt19937_64 random_;
  uint64_t next_ = 0;
};

// When each request starts: back to back, or on a fixed schedule.
class Pacer {
 public:
  explicit Pacer(double rate)
      : interval_(rate > 0 ? absl::Seconds(1 / rate) : absl::ZeroDuration()),
        next_(absl::Now()) {}

  // Waits for the next slot and returns the time latency counts from.
  absl::Time Next() {
    if (interval_ == absl::ZeroDuration()) return absl::Now();
    const absl::Time slot = next_;
    next_ += interval_;
    absl::SleepFor(slot - absl::Now());
    return slot;
  }

 private:
  const absl::Duration interval_;
  absl::Time next_;
};

// One client: requests until `end`, recording those that start at or after
// `measure_from` and finish by `end`.
ClientResult RunClient(LoadReader& reader, const Load& load,
                       const BlobShape& shape, int client,
                       absl::Time measure_from, absl::Time end) {
  OffsetPicker offsets(load, shape, client);
  Pacer pacer(load.rate);
  ClientResult result;
  for (absl::Time start = pacer.Next(); start < end; start = pacer.Next()) {
    const absl::Status status = reader.Read(offsets.Next());
    const absl::Time done = absl::Now();
    if (!status.ok()) {
      if (result.errors++ == 0) {  // the first of this client's, to go by
        std::fprintf(stderr, "%s client %d: %s\n", load.kind_name.c_str(),
                     client, status.ToString().c_str());
      }
      if (absl::IsResourceExhausted(status)) ++result.refused;
    } else if (start >= measure_from && done <= end) {
      result.latencies_ns.push_back(absl::ToInt64Nanoseconds(done - start));
      result.bytes += load.size;
    }
  }
  result.retries = reader.retries();
  result.tree_blocks = reader.tree_blocks_received();
  return result;
}

double PercentileUs(const std::vector<int64_t>& sorted_ns, double fraction) {
  if (sorted_ns.empty()) return 0;
  const size_t i = std::min(sorted_ns.size() - 1,
                            static_cast<size_t>(fraction * sorted_ns.size()));
  return sorted_ns[i] / 1e3;
}

// Prints one group's line; returns its error count.
uint64_t Report(const Load& load, const std::vector<ClientResult>& results,
                double seconds) {
  std::vector<int64_t> ns;
  ClientResult all;
  for (const ClientResult& r : results) {
    ns.insert(ns.end(), r.latencies_ns.begin(), r.latencies_ns.end());
    all.bytes += r.bytes;
    all.errors += r.errors;
    all.refused += r.refused;
    all.retries += r.retries;
    all.tree_blocks += r.tree_blocks;
  }
  std::sort(ns.begin(), ns.end());
  std::printf(
      "load class=%s kind=%s size=%llu clients=%d requests=%zu reads_s=%.0f "
      "mib_s=%.1f p50_us=%.1f p99_us=%.1f p999_us=%.1f errors=%llu "
      "refused=%llu retries=%llu tree_blocks=%llu\n",
      load.class_name.c_str(), load.kind_name.c_str(),
      static_cast<unsigned long long>(load.size), load.clients, ns.size(),
      ns.size() / seconds, all.bytes / seconds / (1 << 20),
      PercentileUs(ns, 0.50), PercentileUs(ns, 0.99), PercentileUs(ns, 0.999),
      static_cast<unsigned long long>(all.errors),
      static_cast<unsigned long long>(all.refused),
      static_cast<unsigned long long>(all.retries),
      static_cast<unsigned long long>(all.tree_blocks));
  return all.errors;
}

// Every group's clients, connected (and warmed) in parallel.
absl::StatusOr<std::vector<std::vector<std::unique_ptr<LoadReader>>>>
ConnectClients(const LoadTarget& target, const std::vector<Load>& loads) {
  std::vector<std::vector<absl::StatusOr<std::unique_ptr<LoadReader>>>> made(
      loads.size());
  std::vector<std::thread> threads;
  for (size_t g = 0; g < loads.size(); ++g) {
    made[g].resize(loads[g].clients);
    for (int c = 0; c < loads[g].clients; ++c) {
      threads.emplace_back([&, g, c] {
        made[g][c] =
            target.NewReader(ReadSpec{loads[g].size, loads[g].priority_class});
      });
    }
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::vector<std::unique_ptr<LoadReader>>> readers(loads.size());
  for (size_t g = 0; g < loads.size(); ++g) {
    for (auto& reader : made[g]) {
      if (!reader.ok()) return reader.status();
      readers[g].push_back(std::move(*reader));
    }
  }
  return readers;
}

int Run(const LoadTarget& target, const std::vector<Load>& loads) {
  absl::StatusOr<BlobShape> shape = target.Shape();
  if (!shape.ok())
    return std::fprintf(stderr, "%s\n", shape.status().ToString().c_str()), 1;
  for (const Load& load : loads) {
    if (load.size % shape->block_size != 0 || load.size > shape->data_size) {
      std::fprintf(stderr, "size %llu: not a multiple of %llu or too big\n",
                   static_cast<unsigned long long>(load.size),
                   static_cast<unsigned long long>(shape->block_size));
      return 1;
    }
  }
  auto readers = ConnectClients(target, loads);
  if (!readers.ok()) {
    return std::fprintf(stderr, "connecting: %s\n",
                        readers.status().ToString().c_str()),
           1;
  }
  const absl::Duration measured = absl::Seconds(absl::GetFlag(FLAGS_seconds));
  const absl::Time measure_from =
      absl::Now() + absl::Seconds(absl::GetFlag(FLAGS_warmup_seconds));
  const absl::Time end = measure_from + measured;
  std::vector<std::vector<ClientResult>> results(loads.size());
  std::vector<std::thread> threads;
  for (size_t g = 0; g < loads.size(); ++g) {
    results[g].resize(loads[g].clients);
    for (int c = 0; c < loads[g].clients; ++c) {
      threads.emplace_back([&, g, c] {
        results[g][c] = RunClient(*(*readers)[g][c], loads[g], *shape, c,
                                  measure_from, end);
      });
    }
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t errors = 0;
  for (size_t g = 0; g < loads.size(); ++g) {
    errors += Report(loads[g], results[g], absl::ToDoubleSeconds(measured));
  }
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace verity::bench

int main(int argc, char** argv) {
  // As verityd and verity do (Debian's Abseil checks every lock otherwise).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  std::vector<verity::bench::Load> loads;
  for (const std::string& text : absl::GetFlag(FLAGS_load)) {
    absl::StatusOr<verity::bench::Load> load = verity::bench::ParseLoad(text);
    if (!load.ok())
      return std::fprintf(stderr, "%s\n", load.status().ToString().c_str()), 1;
    loads.push_back(*load);
  }
  if (loads.empty()) {
    return std::fprintf(stderr, "need at least one --load\n"), 1;
  }
  verity::bench::TargetOptions options;
  options.kind = absl::GetFlag(FLAGS_target);
  options.address = absl::GetFlag(FLAGS_server);
  options.digest = absl::GetFlag(FLAGS_digest);
  options.echo_bytes = absl::GetFlag(FLAGS_echo_bytes);
  auto target = verity::bench::MakeLoadTarget(options);
  if (!target.ok())
    return std::fprintf(stderr, "%s\n", target.status().ToString().c_str()), 1;
  return verity::bench::Run(**target, loads);
}
