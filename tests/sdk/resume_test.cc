// Resuming against a real verityd behind a proxy that breaks streams at
// random points: the fetched bytes are exactly the blob's, whatever the
// sink or split; retries stop after max_attempts without progress; and
// neither DATA_LOSS from the server nor a failed verification is retried.

#include <memory>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "tests/sdk/flaky_proxy.h"
#include "tests/sdk/sdk_fixture.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

class ResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions options;
    // Every message carries 64 KiB: the window does not grow.
    options.service.read_chunk_bytes = 64 << 10;
    options.service.max_read_chunk_bytes = 64 << 10;
    server_ = TestServer::Start(options);
    // 80 data messages, 20 level-0 tree blocks.
    blob_ = std::make_unique<StoredBlob>(
        PutRandomBlob(*server_, (5 << 20) + 4321, 3));
  }

  // A client of a new proxy with `options`.
  std::unique_ptr<sdk::Client> Through(const FlakyProxy::Options& options,
                                       int max_attempts = 5) {
    proxy_ = std::make_unique<ProxyServer>(server_->channel(), options);
    sdk::ClientOptions client = FastRetryOptions(proxy_->address());
    client.retry.max_attempts = max_attempts;
    return *sdk::Client::Create(client);
  }

  std::string Range(uint64_t offset, uint64_t length) const {
    return blob_->data.substr(offset, length);
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<StoredBlob> blob_;
  std::unique_ptr<ProxyServer> proxy_;
};

TEST_F(ResumeTest, RandomBreaksGiveExactlyTheBlob) {
  std::mt19937_64 rng(7);
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    FlakyProxy::Options breaks;
    breaks.min_messages = 1;  // a server's first message carries data
    breaks.max_messages = 12;
    breaks.code =
        seed % 2 ? grpc::StatusCode::UNAVAILABLE : grpc::StatusCode::INTERNAL;
    breaks.seed = seed;
    std::unique_ptr<sdk::Client> client = Through(breaks);
    sdk::FetchOptions options;
    options.parallel_streams = 1 + seed % 4;
    options.offset = seed == 1 ? 0 : rng() % 10000;
    const uint64_t length = blob_->data.size() - options.offset - seed * 1000;
    options.length = length;
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " parallel "
                                      << options.parallel_streams);
    std::string streamed;
    sdk::CallbackSink callback([&streamed](absl::Span<const uint8_t> data) {
      streamed.append(data.begin(), data.end());
      return absl::OkStatus();
    });
    ASSERT_TRUE(client->Fetch(blob_->digest, callback, options).ok());
    EXPECT_TRUE(streamed == Range(options.offset, length));
    sdk::MemorySink memory;
    ASSERT_TRUE(client->Fetch(blob_->digest, memory, options).ok());
    EXPECT_TRUE(memory.data() == Range(options.offset, length));
    EXPECT_GT(client->Stats().retries, 0u);
    EXPECT_GT(proxy_->proxy().broken_streams(), 0);
    // Resumed requests start on a block boundary inside the range.
    for (const v1::ReadRequest& read : proxy_->proxy().reads()) {
      EXPECT_TRUE(read.offset() == options.offset || read.offset() % 4096 == 0);
    }
  }
}

TEST_F(ResumeTest, StalledStreamsResumeAfterTheirDeadline) {
  FlakyProxy::Options stalls;
  stalls.min_messages = 10;
  stalls.max_messages = 40;
  stalls.stall = true;
  proxy_ = std::make_unique<ProxyServer>(server_->channel(), stalls);
  sdk::ClientOptions options = FastRetryOptions(proxy_->address());
  options.rpc_timeout = absl::Milliseconds(500);
  std::unique_ptr<sdk::Client> client = *sdk::Client::Create(options);
  absl::StatusOr<std::string> got =
      client->ReadRange(blob_->digest, 0, blob_->data.size());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*got == blob_->data);
  EXPECT_GT(client->Stats().retries, 0u);
}

TEST_F(ResumeTest, RetriesStopAfterMaxAttemptsWithoutProgress) {
  FlakyProxy::Options dead;
  dead.min_messages = 0;
  dead.max_messages = 0;
  std::unique_ptr<sdk::Client> client = Through(dead, /*max_attempts=*/3);
  EXPECT_EQ(client->ReadRange(blob_->digest, 0, 100).status().code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(proxy_->proxy().reads().size(), 3u);
  EXPECT_EQ(client->Stats().retries, 2u);
}

TEST_F(ResumeTest, ProgressRestartsTheCount) {
  FlakyProxy::Options slow;
  slow.min_messages = 1;
  slow.max_messages = 1;  // one data message per stream
  std::unique_ptr<sdk::Client> client = Through(slow, /*max_attempts=*/2);
  absl::StatusOr<std::string> got =
      client->ReadRange(blob_->digest, 0, 10 * 65536);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*got == Range(0, 10 * 65536));
  EXPECT_EQ(proxy_->proxy().reads().size(), 10u);
}

// A server that sends one message per stream and then stalls makes progress
// on every attempt, so only the fetch's own deadline ends it.
TEST_F(ResumeTest, TheFetchDeadlineEndsAFetchThatKeepsProgressing) {
  FlakyProxy::Options trickle;
  trickle.min_messages = 1;
  trickle.max_messages = 1;
  trickle.stall = true;
  proxy_ = std::make_unique<ProxyServer>(server_->channel(), trickle);
  sdk::ClientOptions client_options = FastRetryOptions(proxy_->address());
  client_options.rpc_timeout = absl::Milliseconds(200);  // 80 x 200 ms in all
  std::unique_ptr<sdk::Client> client = *sdk::Client::Create(client_options);
  sdk::FetchOptions options;
  const absl::Time start = absl::Now();
  options.deadline = start + absl::Seconds(1.5);
  std::string streamed;
  sdk::CallbackSink sink([&streamed](absl::Span<const uint8_t> data) {
    streamed.append(data.begin(), data.end());
    return absl::OkStatus();
  });
  const absl::Status status = client->Fetch(blob_->digest, sink, options);
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(4));
  EXPECT_GE(proxy_->proxy().reads().size(), 3u);
  EXPECT_GT(streamed.size(), 0u);
  EXPECT_LT(streamed.size(), blob_->data.size());
  EXPECT_TRUE(streamed == Range(0, streamed.size()));
}

TEST_F(ResumeTest, DataLossFromTheServerIsNotRetried) {
  FlakyProxy::Options lossy;
  lossy.min_messages = 3;
  lossy.max_messages = 3;
  lossy.code = grpc::StatusCode::DATA_LOSS;
  std::unique_ptr<sdk::Client> client = Through(lossy);
  EXPECT_EQ(
      client->ReadRange(blob_->digest, 0, blob_->data.size()).status().code(),
      StatusCode::kDataLoss);
  EXPECT_EQ(proxy_->proxy().reads().size(), 1u);
}

TEST_F(ResumeTest, CorruptionIsDataLossUnretriedAndNothingUnverifiedLeaks) {
  FlakyProxy::Options corrupt;
  corrupt.corrupt_message = 5;
  for (int parallel : {1, 3}) {
    std::unique_ptr<sdk::Client> client = Through(corrupt);
    sdk::FetchOptions options;
    options.parallel_streams = parallel;
    std::string streamed;
    sdk::CallbackSink callback([&streamed](absl::Span<const uint8_t> data) {
      streamed.append(data.begin(), data.end());
      return absl::OkStatus();
    });
    EXPECT_EQ(client->Fetch(blob_->digest, callback, options).code(),
              StatusCode::kDataLoss);
    EXPECT_LE(proxy_->proxy().reads().size(), static_cast<size_t>(parallel));
    EXPECT_LE(streamed.size(), 5u * 65536);
    EXPECT_TRUE(streamed == Range(0, streamed.size()));
    const std::string path = NewTempDir() + "/out";
    auto file = sdk::FileSink::Create(path);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(client->Fetch(blob_->digest, **file, options).code(),
              StatusCode::kDataLoss);
    EXPECT_EQ(std::fopen(path.c_str(), "r"), nullptr);
  }
}

}  // namespace
}  // namespace verity::testing
