// Load generator for the server's Read dispatch: groups of clients, each a
// thread with its own connection, reading one blob with a priority class, and
// per-group throughput and latency. The client does not verify (it asks for no
// tree blocks): the server's verification and dispatch are what is measured.
//   dispatch_load --server=H:P --digest=D [--seconds=10] [--warmup_seconds=2]
//                 --load=CLASS:KIND:SIZE:CLIENTS[:RATE][,...]
// CLASS is none|rt|be|idle. KIND is random (block-aligned random offsets, one
// synchronous request at a time: the 4 KiB synchronous-read analog), stream
// (sequential SIZE reads through the blob, wrapping, each client starting at a
// different offset: the readahead analog) or scan (the same access pattern, for
// a background scan). SIZE is in bytes, a multiple of the blob's block size.
// RATE, if given, is requests per second per client on a fixed schedule (an
// open loop, like an application's reads): latency is then counted from each
// request's scheduled start, so a slow reply also charges the requests it
// delays. Without RATE a client sends the next request when one ends.
// Give every group in one --load (a repeated --load replaces the earlier one,
// as absl list flags do). All groups run at once. Requests that start after the
// warm-up and end within the measured --seconds count. Prints one line per
// group:
//   load class=rt kind=random size=4096 clients=8 requests=N mib_s=X
//   p50_us=X p99_us=X p999_us=X errors=N
// (on one line) and exits 1 if any Read failed or returned the wrong number of
// bytes, warm-up included.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/verity/v1/verity.grpc.pb.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "verityd address");
ABSL_FLAG(std::string, digest, "", "blob to read");
ABSL_FLAG(int, seconds, 10, "measured time");
ABSL_FLAG(int, warmup_seconds, 2, "time before measuring (not recorded)");
ABSL_FLAG(std::vector<std::string>, load, {},
          "comma-separated CLASS:KIND:SIZE:CLIENTS[:RATE] groups, all run at "
          "once; CLASS none|rt|be|idle, KIND random|stream|scan, SIZE in "
          "bytes, RATE requests/s per client (default: back to back)");

namespace verity::bench {
namespace {

// A Read that has not finished by then is counted as an error.
constexpr absl::Duration kRpcDeadline = absl::Seconds(30);

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
  uint64_t errors = 0;  // warm-up included
};

// The blob's size and block size, for choosing offsets.
struct BlobShape {
  uint64_t data_size = 0;
  uint64_t block_size = 0;
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

// Each client gets its own connection: a channel with a local subchannel pool
// does not share the subchannel (and so the TCP connection) of another.
std::unique_ptr<v1::Verity::Stub> NewStub() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel = grpc::CreateCustomChannel(
      absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials(), args);
  channel->WaitForConnected(absl::ToChronoTime(absl::Now() + kRpcDeadline));
  return v1::Verity::NewStub(channel);
}

absl::StatusOr<BlobShape> StatBlob(const std::string& digest) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
  v1::StatRequest request;
  request.set_digest(digest);
  v1::BlobInfo info;
  grpc::Status status = NewStub()->Stat(&context, request, &info);
  if (!status.ok()) {  // gRPC's codes are absl's, number for number
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  const auto& descriptor = info.fsverity_descriptor();
  return BlobShape{descriptor.data_size(),
                   uint64_t{1} << descriptor.log_block_size()};
}

// One Read of [offset, offset + length), drained; OK if every byte came.
absl::Status ReadRange(v1::Verity::Stub& stub, const std::string& digest,
                       const Load& load, uint64_t offset) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + kRpcDeadline));
  v1::ReadRequest request;
  request.set_digest(digest);
  request.set_offset(offset);
  request.set_length(load.size);
  request.set_priority_class(load.priority_class);
  request.set_have_whole_tree(true);
  auto reader = stub.Read(&context, request);
  v1::ReadResponse response;
  uint64_t bytes = 0;
  while (reader->Read(&response)) bytes += response.data().size();
  grpc::Status status = reader->Finish();
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  if (bytes != load.size) {
    return absl::DataLossError(absl::StrCat("offset ", offset, ": got ", bytes,
                                            " of ", load.size, " bytes"));
  }
  return absl::OkStatus();
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
ClientResult RunClient(const std::string& digest, const Load& load,
                       const BlobShape& shape, int client,
                       absl::Time measure_from, absl::Time end) {
  auto stub = NewStub();
  OffsetPicker offsets(load, shape, client);
  Pacer pacer(load.rate);
  ClientResult result;
  for (absl::Time start = pacer.Next(); start < end; start = pacer.Next()) {
    const absl::Status status = ReadRange(*stub, digest, load, offsets.Next());
    const absl::Time done = absl::Now();
    if (!status.ok()) {
      if (result.errors++ == 0) {  // the first of this client's, to go by
        std::fprintf(stderr, "%s client %d: %s\n", load.kind_name.c_str(),
                     client, status.ToString().c_str());
      }
    } else if (start >= measure_from && done <= end) {
      result.latencies_ns.push_back(absl::ToInt64Nanoseconds(done - start));
      result.bytes += load.size;
    }
  }
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
  uint64_t bytes = 0, errors = 0;
  for (const ClientResult& r : results) {
    ns.insert(ns.end(), r.latencies_ns.begin(), r.latencies_ns.end());
    bytes += r.bytes;
    errors += r.errors;
  }
  std::sort(ns.begin(), ns.end());
  std::printf(
      "load class=%s kind=%s size=%llu clients=%d requests=%zu mib_s=%.1f "
      "p50_us=%.1f p99_us=%.1f p999_us=%.1f errors=%llu\n",
      load.class_name.c_str(), load.kind_name.c_str(),
      static_cast<unsigned long long>(load.size), load.clients, ns.size(),
      bytes / seconds / (1 << 20), PercentileUs(ns, 0.50),
      PercentileUs(ns, 0.99), PercentileUs(ns, 0.999),
      static_cast<unsigned long long>(errors));
  return errors;
}

int Run(const std::string& digest, const std::vector<Load>& loads) {
  absl::StatusOr<BlobShape> shape = StatBlob(digest);
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
        results[g][c] =
            RunClient(digest, loads[g], *shape, c, measure_from, end);
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
  absl::ParseCommandLine(argc, argv);
  std::vector<verity::bench::Load> loads;
  for (const std::string& text : absl::GetFlag(FLAGS_load)) {
    absl::StatusOr<verity::bench::Load> load = verity::bench::ParseLoad(text);
    if (!load.ok())
      return std::fprintf(stderr, "%s\n", load.status().ToString().c_str()), 1;
    loads.push_back(*load);
  }
  if (loads.empty() || absl::GetFlag(FLAGS_digest).empty()) {
    return std::fprintf(stderr, "need --digest and at least one --load\n"), 1;
  }
  return verity::bench::Run(absl::GetFlag(FLAGS_digest), loads);
}
