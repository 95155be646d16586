// The SDK's fetch paths against the in-process fake server: every sink and
// split gives the exact range; the tree cache saves refetching and
// rehashing; broken streams resume where they stopped; and verification
// failures are DATA_LOSS, never retried, with nothing unverified released.

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "client/testing/fake_verity_service.h"
#include "client/testing/read_stream_fixture.h"
#include "gtest/gtest.h"
#include "verity/client.h"

namespace verity::sdk {
namespace {

using ::absl::StatusCode;
using ::verity::client::FakeVerityServer;
using ::verity::v1::ReadResponse;

class ClientImplTest : public ::testing::Test {
 protected:
  ClientImplTest()
      // 293 blocks: three level-0 tree blocks under one top block.
      : blob_(MakeRandomTestBlob(1200000,
                                 TestParams(HashAlgorithm::kSha256, 4096))),
        digest_(*Digest::Parse(blob_.digest_text)) {
    server_.service().Add(blob_, "the/blob");
    ClientOptions options;
    options.target = server_.address();
    options.retry.initial_backoff = absl::Milliseconds(1);
    options.retry.max_backoff = absl::Milliseconds(4);
    client_ = *Client::Create(options);
  }

  // Ends every Read with `code` after keeping `keep` messages of the
  // stream, for the first `times` calls.
  void BreakStreams(int times, size_t keep, grpc::StatusCode code) {
    auto calls = std::make_shared<std::atomic<int>>(0);
    server_.service().SetTamper([=](std::vector<ReadResponse>* stream) {
      if (calls->fetch_add(1) < times && stream->size() > keep) {
        stream->resize(keep);
      }
    });
    server_.service().SetReadStatus([=] {
      return calls->load() <= times ? grpc::Status(code, "cut")
                                    : grpc::Status::OK;
    });
  }

  TestBlob blob_;
  Digest digest_;
  FakeVerityServer server_;
  std::unique_ptr<Client> client_;
};

// A server without BatchUpdate (the fake answers UNIMPLEMENTED) gets a Put
// per blob, each ending alone as in a BatchUpdate.
TEST_F(ClientImplTest, BatchUpdateFallsBackToAPutEach) {
  const TestBlob a =
      MakeRandomTestBlob(5000, TestParams(HashAlgorithm::kSha256, 4096), 2);
  const TestBlob b =
      MakeRandomTestBlob(7000, TestParams(HashAlgorithm::kSha256, 4096), 3);
  const Digest digest_a = *Digest::Parse(a.digest_text);
  const Digest digest_b = *Digest::Parse(b.digest_text);
  absl::StatusOr<std::vector<absl::Status>> stored = client_->BatchUpdate(
      {BatchUpdateBlob{digest_a, a.data}, BatchUpdateBlob{digest_b, a.data},
       BatchUpdateBlob{digest_b, b.data}});
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 3u);
  EXPECT_TRUE((*stored)[0].ok()) << (*stored)[0];
  EXPECT_EQ((*stored)[1].code(), StatusCode::kDataLoss) << (*stored)[1];
  EXPECT_TRUE((*stored)[2].ok()) << (*stored)[2];
  EXPECT_TRUE(*client_->ReadRange(digest_a, 0, a.data.size()) == a.data);
  EXPECT_TRUE(*client_->ReadRange(digest_b, 0, b.data.size()) == b.data);
}

TEST_F(ClientImplTest, EverySinkAndSplitGivesTheRange) {
  for (int parallel : {1, 3, 8}) {
    FetchOptions options;
    options.parallel_streams = parallel;
    MemorySink memory;
    ASSERT_TRUE(client_->Fetch(digest_, memory, options).ok());
    EXPECT_EQ(memory.data(), blob_.data) << parallel;
    std::string streamed;
    CallbackSink callback([&streamed](absl::Span<const uint8_t> data) {
      streamed.append(data.begin(), data.end());
      return absl::OkStatus();
    });
    options.offset = 4095;
    options.length = 200000;
    ASSERT_TRUE(client_->Fetch(digest_, callback, options).ok());
    EXPECT_EQ(streamed, blob_.data.substr(4095, 200000)) << parallel;
  }
}

TEST_F(ClientImplTest, EmptyAndOutOfRangeRanges) {
  for (int parallel : {1, 2}) {
    FetchOptions options;
    options.parallel_streams = parallel;
    EXPECT_EQ(*client_->ReadRange(digest_, 1000, 0, options), "");
    EXPECT_EQ(*client_->ReadRange(digest_, 1200000, 0, options), "");
    options.offset = 1200000;
    MemorySink sink;
    EXPECT_TRUE(client_->Fetch(digest_, sink, options).ok());
    EXPECT_EQ(client_->ReadRange(digest_, 1200001, 0, options).status().code(),
              StatusCode::kOutOfRange);
    EXPECT_EQ(client_->ReadRange(digest_, 10, 1200000, options).status().code(),
              StatusCode::kOutOfRange);
  }
  FetchOptions bad;
  bad.parallel_streams = 0;
  EXPECT_EQ(client_->ReadRange(digest_, 0, 1, bad).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->ReadRange(digest_, 1, UINT64_MAX).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ClientImplTest, RepeatedRangesNeitherRefetchNorRehashTreeBlocks) {
  ASSERT_EQ(*client_->ReadRange(digest_, 50000, 100000),
            blob_.data.substr(50000, 100000));
  const ClientStats first = client_->Stats();
  EXPECT_GT(first.tree_blocks_received, 0u);
  EXPECT_EQ(first.tree_blocks_hashed, first.tree_blocks_received);
  ASSERT_EQ(*client_->ReadRange(digest_, 60000, 1000),
            blob_.data.substr(60000, 1000));
  EXPECT_TRUE(server_.service().last_read().have_whole_tree());
  const ClientStats second = client_->Stats();
  EXPECT_EQ(second.tree_blocks_received, first.tree_blocks_received);
  EXPECT_EQ(second.tree_blocks_hashed, first.tree_blocks_hashed);
  EXPECT_EQ(second.requests_with_held_tree_blocks, 1u);
  // A wider range names the blocks it holds and gets only the others.
  ASSERT_TRUE(client_->ReadRange(digest_, 0, 1200000).ok());
  EXPECT_FALSE(server_.service().last_read().have_tree_blocks().empty());
  EXPECT_EQ(client_->Stats().tree_blocks_hashed,
            client_->Stats().tree_blocks_received);
  EXPECT_GT(client_->Stats().tree_cache_bytes, 0u);
  EXPECT_EQ(client_->Stats().tree_cache_blobs, 1u);
}

TEST_F(ClientImplTest, BrokenStreamsResumeWhereTheyStopped) {
  BreakStreams(3, 4, grpc::StatusCode::UNAVAILABLE);
  MemorySink sink;
  ASSERT_TRUE(client_->Fetch(digest_, sink, {}).ok());
  EXPECT_EQ(sink.data(), blob_.data);
  const std::vector<v1::ReadRequest> reads = server_.service().reads();
  ASSERT_EQ(reads.size(), 4u);
  EXPECT_EQ(client_->Stats().retries, 3u);
  for (size_t i = 1; i < reads.size(); ++i) {
    // Four data messages of four blocks per stream made it through.
    EXPECT_EQ(reads[i].offset(), i * 4 * 4 * 4096);
    EXPECT_EQ(reads[i].offset() + reads[i].length(), blob_.data.size());
    EXPECT_FALSE(reads[i].have_tree_blocks().empty());
  }
}

TEST_F(ClientImplTest, RetriesStopAfterMaxAttemptsWithoutProgress) {
  BreakStreams(1000, 0, grpc::StatusCode::UNAVAILABLE);
  MemorySink sink;
  EXPECT_EQ(client_->Fetch(digest_, sink, {}).code(), StatusCode::kUnavailable);
  EXPECT_EQ(server_.service().reads().size(), 5u);
  EXPECT_EQ(sink.data(), "");
}

TEST_F(ClientImplTest, ServerDataLossIsNotRetried) {
  BreakStreams(1000, 3, grpc::StatusCode::DATA_LOSS);
  EXPECT_EQ(client_->ReadRange(digest_, 0, 1200000).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(server_.service().reads().size(), 1u);
}

TEST_F(ClientImplTest, TamperingIsDataLossNeverRetriedAndReleasesNothing) {
  server_.service().SetTamper([](std::vector<ReadResponse>* stream) {
    (*(*stream)[3].mutable_data())[5] ^= 1;
  });
  for (int parallel : {1, 4}) {
    FetchOptions options;
    options.parallel_streams = parallel;
    const size_t before = server_.service().reads().size();
    std::string streamed;
    CallbackSink callback([&streamed](absl::Span<const uint8_t> data) {
      streamed.append(data.begin(), data.end());
      return absl::OkStatus();
    });
    EXPECT_EQ(client_->Fetch(digest_, callback, options).code(),
              StatusCode::kDataLoss);
    EXPECT_LE(server_.service().reads().size() - before,
              static_cast<size_t>(parallel));
    EXPECT_EQ(streamed, blob_.data.substr(0, streamed.size()));
    MemorySink memory;
    EXPECT_EQ(client_->Fetch(digest_, memory, options).code(),
              StatusCode::kDataLoss);
    EXPECT_EQ(memory.data(), "");
  }
}

TEST_F(ClientImplTest, SinkErrorsEndTheFetchUnretried) {
  CallbackSink full([](absl::Span<const uint8_t>) {
    return absl::ResourceExhaustedError("disk full");
  });
  EXPECT_EQ(client_->Fetch(digest_, full, {}).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(server_.service().reads().size(), 1u);
}

TEST_F(ClientImplTest, MissingBlobIsNotFound) {
  const Digest missing = *Digest::Parse("sha256:" + std::string(64, '0'));
  for (int parallel : {1, 2}) {
    FetchOptions options;
    options.parallel_streams = parallel;
    EXPECT_EQ(client_->ReadRange(missing, 0, 10, options).status().code(),
              StatusCode::kNotFound);
  }
}

}  // namespace
}  // namespace verity::sdk
