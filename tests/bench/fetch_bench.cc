// Fetch throughput over loopback: a verified fetch through the SDK, or the same
// Read stream consumed raw with no client-side verification (the benchmark-only
// baseline; pair it with a server started with --verify_on_read=false), and a
// slow-reader load for server memory.
//   fetch_bench --server=H:P --digest=D --mode=sdk|raw [--streams=N]
//   [--rounds=R] fetch_bench --server=H:P --digest=D --mode=slow_readers
//   --readers=200 --seconds=10
// Prints one line per round: "<mode> streams=<n> <bytes> bytes <seconds> s
// <MB/s> MB/s".
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/verity/v1/verity.grpc.pb.h"
#include "verity/client.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "verityd address");
ABSL_FLAG(std::string, digest, "", "blob to fetch");
ABSL_FLAG(std::string, mode, "sdk", "sdk | raw | slow_readers");
ABSL_FLAG(int, streams, 1, "parallel streams (sdk mode)");
ABSL_FLAG(int, rounds, 3, "fetches to time");
ABSL_FLAG(int, readers, 200, "slow_readers: concurrent streams");
ABSL_FLAG(int, seconds, 10, "slow_readers: how long to hold them");

namespace verity::bench {
namespace {

// Counts what the verified fetch delivers, and keeps nothing.
class CountingSink final : public sdk::Sink {
 public:
  bool SupportsRandomAccess() const override { return true; }
  absl::Status Start(uint64_t /*size*/) override { return absl::OkStatus(); }
  absl::Status Write(uint64_t /*offset*/,
                     absl::Span<const uint8_t> data) override {
    bytes_ += data.size();
    return absl::OkStatus();
  }
  absl::Status Finish() override { return absl::OkStatus(); }
  void Abort() override {}
  uint64_t bytes() const { return bytes_.load(); }

 private:
  std::atomic<uint64_t> bytes_{0};
};

void Report(const char* mode, int streams, uint64_t bytes,
            absl::Duration took) {
  const double seconds = absl::ToDoubleSeconds(took);
  std::printf("%s streams=%d %llu bytes %.3f s %.1f MB/s\n", mode, streams,
              static_cast<unsigned long long>(bytes), seconds,
              bytes / seconds / 1e6);
  std::fflush(stdout);
}

int RunSdk(const sdk::Digest& digest) {
  sdk::ClientOptions options;
  options.target = absl::GetFlag(FLAGS_server);
  auto client = sdk::Client::Create(options);
  if (!client.ok())
    return std::fprintf(stderr, "%s\n", client.status().ToString().c_str()), 1;
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    CountingSink sink;
    sdk::FetchOptions fetch;
    fetch.parallel_streams = absl::GetFlag(FLAGS_streams);
    const absl::Time start = absl::Now();
    absl::Status status = (*client)->Fetch(digest, sink, fetch);
    if (!status.ok())
      return std::fprintf(stderr, "%s\n", status.ToString().c_str()), 1;
    Report("sdk", fetch.parallel_streams, sink.bytes(), absl::Now() - start);
  }
  return 0;
}

// Reads a whole stream without verifying anything: the transport's ceiling.
absl::StatusOr<uint64_t> RawRead(v1::Verity::Stub& stub,
                                 const std::string& digest,
                                 absl::Duration pause) {
  grpc::ClientContext context;
  v1::ReadRequest request;
  request.set_digest(digest);
  auto reader = stub.Read(&context, request);
  v1::ReadResponse response;
  uint64_t bytes = 0;
  while (reader->Read(&response)) {
    bytes += response.data().size();
    if (pause > absl::ZeroDuration()) absl::SleepFor(pause);
  }
  grpc::Status status = reader->Finish();
  if (!status.ok() && status.error_code() != grpc::CANCELLED) {
    return absl::UnknownError(status.error_message());
  }
  return bytes;
}

std::unique_ptr<v1::Verity::Stub> NewStub() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  return v1::Verity::NewStub(grpc::CreateCustomChannel(
      absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials(), args));
}

int RunRaw(const std::string& digest) {
  auto stub = NewStub();
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    const absl::Time start = absl::Now();
    absl::StatusOr<uint64_t> bytes =
        RawRead(*stub, digest, absl::ZeroDuration());
    if (!bytes.ok())
      return std::fprintf(stderr, "%s\n", bytes.status().ToString().c_str()), 1;
    Report("raw", 1, *bytes, absl::Now() - start);
  }
  return 0;
}

// Many readers that take one message every 100 ms: the server must not buffer
// their blobs.
int RunSlowReaders(const std::string& digest) {
  const int readers = absl::GetFlag(FLAGS_readers);
  std::vector<std::unique_ptr<v1::Verity::Stub>> stubs;
  for (int i = 0; i < 4; ++i) stubs.push_back(NewStub());  // a few connections
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts(readers);
  std::vector<std::thread> threads;
  for (int i = 0; i < readers; ++i) {
    contexts[i] = std::make_unique<grpc::ClientContext>();
    threads.emplace_back([&, i] {
      v1::ReadRequest request;
      request.set_digest(digest);
      auto reader = stubs[i % stubs.size()]->Read(contexts[i].get(), request);
      v1::ReadResponse response;
      while (reader->Read(&response)) absl::SleepFor(absl::Milliseconds(100));
      reader->Finish();
    });
  }
  absl::SleepFor(absl::Seconds(absl::GetFlag(FLAGS_seconds)));
  std::printf("slow_readers readers=%d held %d s\n", readers,
              absl::GetFlag(FLAGS_seconds));
  std::fflush(stdout);
  for (auto& context : contexts) context->TryCancel();
  for (auto& thread : threads) thread.join();
  return 0;
}

}  // namespace
}  // namespace verity::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string text = absl::GetFlag(FLAGS_digest);
  absl::StatusOr<verity::sdk::Digest> digest = verity::sdk::Digest::Parse(text);
  if (!digest.ok()) return std::fprintf(stderr, "bad --digest\n"), 1;
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode == "sdk") return verity::bench::RunSdk(*digest);
  if (mode == "raw") return verity::bench::RunRaw(text);
  if (mode == "slow_readers") return verity::bench::RunSlowReaders(text);
  std::fprintf(stderr, "unknown --mode\n");
  return 1;
}
