// Implements the readers: client::ReadVerified through the test fixture, and
// the SDK with a sink that keeps every write.

#include "tests/tamper/tamper_readers.h"

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"

namespace verity::tamper {
namespace {

// Records every write, from however many fetching threads.
class RecordingSink final : public sdk::Sink {
 public:
  bool SupportsRandomAccess() const override { return true; }
  absl::Status Write(uint64_t offset, absl::Span<const uint8_t> data) override
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    writes_.emplace_back(offset, std::string(data.begin(), data.end()));
    return absl::OkStatus();
  }
  std::vector<std::pair<uint64_t, std::string>> writes()
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return writes_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::pair<uint64_t, std::string>> writes_ ABSL_GUARDED_BY(mu_);
};

Released ReadThroughSdk(const std::string& address, const std::string& digest,
                        uint64_t offset, uint64_t length, int streams) {
  sdk::ClientOptions options;
  options.target = address;
  absl::StatusOr<std::unique_ptr<sdk::Client>> client =
      sdk::Client::Create(options);
  absl::StatusOr<sdk::Digest> parsed = sdk::Digest::Parse(digest);
  if (!client.ok() || !parsed.ok()) {
    return {client.ok() ? parsed.status() : client.status(), {}};
  }
  sdk::FetchOptions fetch;
  fetch.offset = offset;
  if (length != 0) fetch.length = length;
  fetch.parallel_streams = streams;
  RecordingSink sink;
  absl::Status status = (*client)->Fetch(*parsed, sink, fetch);
  return {std::move(status), sink.writes()};
}

}  // namespace

Released ReadThrough(Reader reader, const std::string& address,
                     const std::string& digest, uint64_t offset,
                     uint64_t length) {
  if (reader != Reader::kReadVerified) {
    return ReadThroughSdk(address, digest, offset, length,
                          reader == Reader::kSdkParallel ? 4 : 1);
  }
  auto channel =
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  std::unique_ptr<v1::Verity::Stub> stub = v1::Verity::NewStub(channel);
  testing::ReadResult result = testing::ReadBlob(*stub, digest, offset, length);
  Released released{result.status, {}};
  if (!result.data.empty()) released.writes.emplace_back(0, result.data);
  return released;
}

}  // namespace verity::tamper
