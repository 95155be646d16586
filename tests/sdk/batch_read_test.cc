// Client::BatchRead against a real verityd: whole small blobs in one call,
// each verified; each blob's failure its own (unknown, too big, over the
// call's budget, corrupted on the way); a malformed or oversized call refused
// whole; and a server without BatchRead served one Fetch per blob.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/sdk/flaky_proxy.h"
#include "tests/sdk/sdk_fixture.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

class BatchReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = TestServer::Start();
    client_ = Connect(server_->verityd().address());
  }

  static std::unique_ptr<sdk::Client> Connect(const std::string& target) {
    return *sdk::Client::Create(FastRetryOptions(target));
  }

  std::vector<StoredBlob> Put(const std::vector<size_t>& sizes) {
    std::vector<StoredBlob> blobs;
    for (size_t i = 0; i < sizes.size(); ++i) {
      blobs.push_back(PutRandomBlob(*server_, sizes[i], 100 + i));
    }
    return blobs;
  }

  static std::vector<sdk::Digest> DigestsOf(
      const std::vector<StoredBlob>& blobs) {
    std::vector<sdk::Digest> digests;
    for (const StoredBlob& blob : blobs) digests.push_back(blob.digest);
    return digests;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<sdk::Client> client_;
};

TEST_F(BatchReadTest, ReadsWholeBlobsInOneCall) {
  const std::vector<StoredBlob> blobs = Put({0, 1, 4096, 16384, 200000});
  const auto read = client_->BatchRead(DigestsOf(blobs), {});
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), blobs.size());
  for (size_t i = 0; i < blobs.size(); ++i) {
    ASSERT_TRUE((*read)[i].ok()) << i << ": " << (*read)[i].status();
    EXPECT_EQ(*(*read)[i], blobs[i].data) << i;
  }
  const sdk::ClientStats stats = client_->Stats();
  EXPECT_EQ(stats.batch_reads, 1u);
  EXPECT_EQ(stats.batch_blobs, blobs.size());
  EXPECT_EQ(stats.read_streams + stats.small_reads, 0u);
}

TEST_F(BatchReadTest, EachBlobFailsAlone) {
  const std::vector<StoredBlob> blobs = Put({5000, 300000});
  const sdk::Digest unknown = PutRandomBlob(*server_, 10, 1).digest;
  ASSERT_TRUE(client_->Delete(unknown).ok());
  const auto read =
      client_->BatchRead({blobs[0].digest, unknown, blobs[1].digest}, {});
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ(*(*read)[0], blobs[0].data);
  EXPECT_EQ((*read)[1].status().code(), StatusCode::kNotFound);
  // Over 256 KiB of blocks: a Fetch's, not a batch's.
  EXPECT_EQ((*read)[2].status().code(), StatusCode::kInvalidArgument)
      << (*read)[2].status();
}

TEST_F(BatchReadTest, BlobsPastTheCallsBudgetFailAlone) {
  // 16 of 250,000 bytes fit in 4 MiB, the 17th does not.
  const std::vector<StoredBlob> blobs = Put(std::vector<size_t>(18, 250000));
  const auto read = client_->BatchRead(DigestsOf(blobs), {});
  ASSERT_TRUE(read.ok()) << read.status();
  for (size_t i = 0; i < blobs.size(); ++i) {
    if (i < 16) {
      ASSERT_TRUE((*read)[i].ok()) << i << ": " << (*read)[i].status();
      EXPECT_EQ(*(*read)[i], blobs[i].data);
    } else {
      EXPECT_EQ((*read)[i].status().code(), StatusCode::kInvalidArgument) << i;
    }
  }
}

TEST_F(BatchReadTest, AMalformedOrOversizedCallIsRefusedWhole) {
  const StoredBlob blob = PutRandomBlob(*server_, 100, 1);
  const std::vector<sdk::Digest> many(sdk::kMaxBatchReadBlobs + 1, blob.digest);
  EXPECT_EQ(client_->BatchRead(many, {}).status().code(),
            StatusCode::kInvalidArgument);
  // The server's own checks, for a client that skips them.
  const auto call = [&](const v1::BatchReadRequest& request) {
    grpc::ClientContext context;
    v1::BatchReadResponse response;
    return server_->stub().BatchRead(&context, request, &response).error_code();
  };
  v1::BatchReadRequest too_many;
  for (size_t i = 0; i <= sdk::kMaxBatchReadBlobs; ++i) {
    too_many.add_digests(blob.digest.ToString());
  }
  EXPECT_EQ(call(too_many), grpc::StatusCode::INVALID_ARGUMENT);
  v1::BatchReadRequest malformed;
  malformed.add_digests(blob.digest.ToString());
  malformed.add_digests("sha256:0123");
  EXPECT_EQ(call(malformed), grpc::StatusCode::INVALID_ARGUMENT);
  v1::BatchReadRequest bad_class;
  bad_class.add_digests(blob.digest.ToString());
  bad_class.set_priority_class(static_cast<v1::PriorityClass>(9));
  EXPECT_EQ(call(bad_class), grpc::StatusCode::INVALID_ARGUMENT);
  v1::BatchReadRequest empty;
  EXPECT_EQ(call(empty), grpc::StatusCode::OK);
}

TEST_F(BatchReadTest, ABlobCorruptedOnTheWayIsDataLossAndTheRestArrive) {
  const std::vector<StoredBlob> blobs = Put({16384, 16384, 16384});
  FlakyProxy::Options options;
  options.serve_batch_reads = true;
  options.corrupt_batch_blob = 1;
  ProxyServer proxy(server_->channel(), options);
  const auto read = Connect(proxy.address())->BatchRead(DigestsOf(blobs), {});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*(*read)[0], blobs[0].data);
  EXPECT_EQ((*read)[1].status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(*(*read)[2], blobs[2].data);
}

TEST_F(BatchReadTest, ABlobDamagedInTheStoreIsDataLossAndTheRestArrive) {
  const std::vector<StoredBlob> blobs = Put({16384, 16384});
  FlipBit(BlobDir(*server_, blobs[0].digest.ToString()) + "/data", 5000);
  const auto read = client_->BatchRead(DigestsOf(blobs), {});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)[0].status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(*(*read)[1], blobs[1].data);
}

TEST_F(BatchReadTest, AServerWithoutBatchReadIsReadBlobByBlob) {
  const std::vector<StoredBlob> blobs = Put({100, 16384});
  ProxyServer proxy(server_->channel(), FlakyProxy::Options{});
  std::unique_ptr<sdk::Client> client = Connect(proxy.address());
  const sdk::Digest unknown = PutRandomBlob(*server_, 10, 1).digest;
  ASSERT_TRUE(client_->Delete(unknown).ok());
  const auto read =
      client->BatchRead({blobs[0].digest, unknown, blobs[1].digest}, {});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*(*read)[0], blobs[0].data);
  EXPECT_EQ((*read)[1].status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*(*read)[2], blobs[1].data);
  EXPECT_EQ(client->Stats().batch_blobs, 0u);
  EXPECT_EQ(client->Stats().read_streams, 3u);
}

}  // namespace
}  // namespace verity::testing
