// The verified-tree cache against a real verityd, seen through a proxy that
// records every ReadRequest: repeated and overlapping range reads tell the
// server which tree blocks the client holds, and neither refetch nor rehash
// them; a client without a cache refetches.

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

class TreeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = TestServer::Start();
    // 3 MiB: 768 data blocks, six level-0 tree blocks under one top block.
    blob_ = std::make_unique<StoredBlob>(PutRandomBlob(*server_, 3 << 20, 5));
    proxy_ = std::make_unique<ProxyServer>(server_->channel(),
                                           FlakyProxy::Options());
  }

  std::unique_ptr<sdk::Client> NewClient(uint64_t cache_bytes,
                                         const std::string& address = "") {
    sdk::ClientOptions options =
        FastRetryOptions(address.empty() ? proxy_->address() : address);
    options.tree_cache_bytes = cache_bytes;
    return *sdk::Client::Create(options);
  }

  std::string Range(uint64_t offset, uint64_t length) const {
    return blob_->data.substr(offset, length);
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<StoredBlob> blob_;
  std::unique_ptr<ProxyServer> proxy_;
};

TEST_F(TreeCacheTest, RepeatedRangesNeitherRefetchNorRehash) {
  std::unique_ptr<sdk::Client> client = NewClient(64 << 20);
  ASSERT_TRUE(*client->ReadRange(blob_->digest, 100000, 5000) ==
              Range(100000, 5000));
  const sdk::ClientStats first = client->Stats();
  EXPECT_EQ(first.tree_blocks_received, 2u);  // the top and one level-0 block
  EXPECT_EQ(first.tree_blocks_hashed, 2u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(*client->ReadRange(blob_->digest, 101000 + i, 3000) ==
                Range(101000 + i, 3000));
  }
  const sdk::ClientStats again = client->Stats();
  EXPECT_EQ(again.tree_blocks_received, 2u);
  EXPECT_EQ(again.tree_blocks_hashed, 2u);
  EXPECT_EQ(again.requests_with_held_tree_blocks, 3u);
  const std::vector<v1::ReadRequest> reads = proxy_->proxy().reads();
  ASSERT_EQ(reads.size(), 4u);
  EXPECT_FALSE(reads[0].have_whole_tree());
  EXPECT_TRUE(reads[0].have_tree_blocks().empty());
  for (int i = 1; i < 4; ++i) EXPECT_TRUE(reads[i].have_whole_tree());
}

TEST_F(TreeCacheTest, AWiderRangeNamesTheBlocksItHolds) {
  std::unique_ptr<sdk::Client> client = NewClient(64 << 20);
  ASSERT_TRUE(client->ReadRange(blob_->digest, 0, 4096).ok());
  ASSERT_TRUE(*client->ReadRange(blob_->digest, 0, blob_->data.size()) ==
              blob_->data);
  const v1::ReadRequest wide = proxy_->proxy().reads().back();
  EXPECT_FALSE(wide.have_whole_tree());
  EXPECT_EQ(std::vector<uint64_t>(wide.have_tree_blocks().begin(),
                                  wide.have_tree_blocks().end()),
            (std::vector<uint64_t>{0, 1}));
  // Every tree block came once, and was hashed once.
  EXPECT_EQ(client->Stats().tree_blocks_received, 7u);
  EXPECT_EQ(client->Stats().tree_blocks_hashed, 7u);
  // Parallel parts share the cached tree too.
  sdk::FetchOptions parallel;
  parallel.parallel_streams = 4;
  ASSERT_TRUE(*client->ReadRange(blob_->digest, 5, blob_->data.size() - 5,
                                 parallel) == blob_->data.substr(5));
  EXPECT_EQ(client->Stats().tree_blocks_received, 7u);
  const std::vector<v1::ReadRequest> reads = proxy_->proxy().reads();
  ASSERT_EQ(reads.size(), 6u);
  for (size_t i = 2; i < reads.size(); ++i) {
    EXPECT_TRUE(reads[i].have_whole_tree());
  }
}

TEST_F(TreeCacheTest, ParallelPartsFetchEachTreeBlockOnce) {
  std::unique_ptr<sdk::Client> client = NewClient(64 << 20);
  sdk::FetchOptions parallel;
  parallel.parallel_streams = 3;
  ASSERT_TRUE(*client->ReadRange(blob_->digest, 0, blob_->data.size(),
                                 parallel) == blob_->data);
  // The top block may come with each part (a part's stream asks before the
  // others have it), each level-0 block comes once.
  const sdk::ClientStats stats = client->Stats();
  EXPECT_GE(stats.tree_blocks_received, 7u);
  EXPECT_LE(stats.tree_blocks_received, 9u);
  EXPECT_EQ(stats.tree_blocks_hashed, 7u);
}

TEST_F(TreeCacheTest, WithoutACacheEveryReadRefetches) {
  std::unique_ptr<sdk::Client> client = NewClient(0);
  ASSERT_TRUE(client->ReadRange(blob_->digest, 100000, 5000).ok());
  ASSERT_TRUE(client->ReadRange(blob_->digest, 100000, 5000).ok());
  EXPECT_EQ(client->Stats().tree_blocks_received, 4u);
  EXPECT_EQ(client->Stats().tree_cache_blobs, 0u);
  EXPECT_FALSE(proxy_->proxy().reads().back().have_whole_tree());
}

TEST_F(TreeCacheTest, ClientsShareNothing) {
  ASSERT_TRUE(NewClient(64 << 20)->ReadRange(blob_->digest, 0, 10).ok());
  std::unique_ptr<sdk::Client> other = NewClient(64 << 20);
  ASSERT_TRUE(other->ReadRange(blob_->digest, 0, 10).ok());
  EXPECT_EQ(other->Stats().tree_blocks_received, 2u);
}

// A range that fits one message, of a blob whose tree the client holds, is
// one ReadSmall call; the first read (no tree yet) and a range one block too
// large are streams.
TEST_F(TreeCacheTest, HeldTreesMakeSmallRangesOneUnaryCall) {
  FlakyProxy::Options options;
  options.serve_small_reads = true;
  ProxyServer proxy(server_->channel(), options);
  std::unique_ptr<sdk::Client> client = NewClient(64 << 20, proxy.address());
  ASSERT_TRUE(*client->ReadRange(blob_->digest, 100000, 5000) ==
              Range(100000, 5000));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(*client->ReadRange(blob_->digest, 101000 + i, 3000) ==
                Range(101000 + i, 3000));
  }
  ASSERT_TRUE(*client->ReadRange(blob_->digest, 0, 256 << 10) ==
              Range(0, 256 << 10));
  ASSERT_TRUE(*client->ReadRange(blob_->digest, 1, 256 << 10) ==
              Range(1, 256 << 10));
  const sdk::ClientStats stats = client->Stats();
  EXPECT_EQ(stats.read_streams, 2u);
  EXPECT_EQ(stats.small_reads, 4u);
  // Every range lies under the first level-0 block, held since the first.
  EXPECT_EQ(stats.tree_blocks_received, 2u);
  const std::vector<v1::ReadRequest> small = proxy.proxy().small_reads();
  ASSERT_EQ(small.size(), 4u);
  for (const v1::ReadRequest& request : small) {
    EXPECT_TRUE(request.have_whole_tree());
  }
  EXPECT_EQ(proxy.proxy().reads().size(), 2u);
}

// A server from before ReadSmall answers UNIMPLEMENTED: that read is
// streamed, and the client streams from then on without asking again.
TEST_F(TreeCacheTest, AServerWithoutSmallReadsIsAskedOnce) {
  std::unique_ptr<sdk::Client> client = NewClient(64 << 20);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(*client->ReadRange(blob_->digest, 100000 + i, 5000) ==
                Range(100000 + i, 5000));
  }
  EXPECT_EQ(proxy_->proxy().small_reads().size(), 1u);
  EXPECT_EQ(proxy_->proxy().reads().size(), 4u);
  EXPECT_EQ(client->Stats().small_reads, 0u);
  EXPECT_EQ(client->Stats().read_streams, 4u);
}

// A small read is verified as a stream is: a flipped bit is DATA_LOSS, and
// the tree it was checked against stays good for the next read.
TEST_F(TreeCacheTest, ACorruptSmallReadIsDataLoss) {
  FlakyProxy::Options options;
  options.serve_small_reads = true;
  options.corrupt_small_reads = true;
  ProxyServer proxy(server_->channel(), options);
  std::unique_ptr<sdk::Client> client = NewClient(64 << 20, proxy.address());
  ASSERT_TRUE(client->ReadRange(blob_->digest, 0, 10).ok());
  const absl::StatusOr<std::string> bad =
      client->ReadRange(blob_->digest, 8192, 4096);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss) << bad.status();
  EXPECT_EQ(proxy.proxy().small_reads().size(), 1u);
  ASSERT_TRUE(*client->ReadRange(blob_->digest, 1 << 20, 1 << 20) ==
              Range(1 << 20, 1 << 20));
}

}  // namespace
}  // namespace verity::testing
