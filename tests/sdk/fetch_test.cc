// The SDK against a real verityd: every range of blobs of several sizes and
// tree parameters, through every sink, over one or several streams, equals
// the data; missing blobs and bad ranges keep their codes.

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/sdk/sdk_fixture.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

class FetchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions options;
    // Small chunks make many messages, and so many chances to go wrong: every
    // message carries 64 KiB (the window does not grow).
    options.service.read_chunk_bytes = 64 << 10;
    options.service.max_read_chunk_bytes = 64 << 10;
    server_ = TestServer::Start(options);
    client_ =
        *sdk::Client::Create(FastRetryOptions(server_->verityd().address()));
    dir_ = NewTempDir();
  }

  // Fetches [offset, offset + length) through the sink `kind` picks and
  // checks it against `blob`.
  void ExpectRange(const StoredBlob& blob, uint64_t offset, uint64_t length,
                   int parallel, int kind) {
    SCOPED_TRACE(::testing::Message()
                 << "size " << blob.data.size() << " range " << offset << "+"
                 << length << " parallel " << parallel << " sink " << kind);
    sdk::FetchOptions options;
    options.offset = offset;
    options.length = length;
    options.parallel_streams = parallel;
    const std::string want = blob.data.substr(offset, length);
    if (kind == 0) {
      sdk::MemorySink sink;
      ASSERT_TRUE(client_->Fetch(blob.digest, sink, options).ok());
      EXPECT_TRUE(sink.data() == want);
    } else if (kind == 1) {
      std::string got;
      sdk::CallbackSink sink([&got](absl::Span<const uint8_t> data) {
        got.append(data.begin(), data.end());
        return absl::OkStatus();
      });
      ASSERT_TRUE(client_->Fetch(blob.digest, sink, options).ok());
      EXPECT_TRUE(got == want);
    } else {
      const std::string path = dir_ + "/out";
      auto sink = sdk::FileSink::Create(path);
      ASSERT_TRUE(sink.ok());
      ASSERT_TRUE(client_->Fetch(blob.digest, **sink, options).ok());
      absl::StatusOr<std::string> got = ReadFile(path);
      ASSERT_TRUE(got.ok());
      EXPECT_TRUE(*got == want);
    }
  }

  static absl::StatusOr<std::string> ReadFile(const std::string& path) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) return absl::NotFoundError(path);
    std::string contents;
    char buffer[65536];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
      contents.append(buffer, n);
    }
    std::fclose(file);
    return contents;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<sdk::Client> client_;
  std::string dir_;
};

TEST_F(FetchTest, EveryRangeOfEverySizeEqualsTheData) {
  std::mt19937_64 rng(42);
  uint32_t seed = 1;
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{4097},
        size_t{(1 << 20) + 123}, size_t{(5 << 20) + 7}}) {
    const StoredBlob blob = PutRandomBlob(*server_, size, seed++);
    for (int parallel : {1, 4}) {
      for (int kind = 0; kind < 3; ++kind) {
        ExpectRange(blob, 0, size, parallel, kind);
      }
    }
    for (int i = 0; i < 6 && size > 0; ++i) {
      const uint64_t offset = rng() % size;
      const uint64_t length = rng() % (size - offset + 1);
      ExpectRange(blob, offset, length, 1 + rng() % 6, rng() % 3);
    }
  }
}

TEST_F(FetchTest, Sha512SaltedSmallBlocks) {
  MerkleParams params;
  params.hash_algorithm = HashAlgorithm::kSha512;
  params.block_size = 1024;
  params.salt = "\x01\x02\x03";
  const StoredBlob blob = PutRandomBlob(*server_, 700001, 7, params);
  ExpectRange(blob, 0, blob.data.size(), 1, 0);
  ExpectRange(blob, 0, blob.data.size(), 5, 1);
  ExpectRange(blob, 1023, 300000, 3, 2);
  ExpectRange(blob, 700000, 1, 2, 0);
}

TEST_F(FetchTest, WholeBlobWithoutALength) {
  const StoredBlob blob = PutRandomBlob(*server_, 300000, 9);
  for (int parallel : {1, 3}) {
    sdk::FetchOptions options;
    options.offset = 1000;
    options.parallel_streams = parallel;
    options.priority = sdk::PriorityClass::kIdle;
    sdk::MemorySink sink;
    ASSERT_TRUE(client_->Fetch(blob.digest, sink, options).ok());
    EXPECT_TRUE(sink.data() == blob.data.substr(1000));
  }
}

TEST_F(FetchTest, MissingBlobsAndBadRanges) {
  const StoredBlob blob = PutRandomBlob(*server_, 10000, 11);
  const sdk::Digest missing =
      *sdk::Digest::Parse("sha256:" + std::string(64, '0'));
  for (int parallel : {1, 2}) {
    sdk::FetchOptions options;
    options.parallel_streams = parallel;
    EXPECT_EQ(client_->ReadRange(missing, 0, 1, options).status().code(),
              StatusCode::kNotFound);
    EXPECT_EQ(
        client_->ReadRange(blob.digest, 10001, 0, options).status().code(),
        StatusCode::kOutOfRange);
    EXPECT_EQ(
        client_->ReadRange(blob.digest, 9000, 1001, options).status().code(),
        StatusCode::kOutOfRange);
  }
  const std::string path = dir_ + "/missing";
  auto sink = sdk::FileSink::Create(path);
  ASSERT_TRUE(sink.ok());
  EXPECT_EQ(client_->Fetch(missing, **sink, {}).code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadFile(path).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace verity::testing
