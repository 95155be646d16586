// ReadVerified against the in-process fake server: what reaches the sink is
// verified, by digest and by name, and server errors keep their codes.

#include "client/testing/verified_read.h"

#include <string>

#include "client/testing/fake_verity_service.h"
#include "client/testing/read_stream_fixture.h"
#include "gtest/gtest.h"

namespace verity::client {
namespace {

using ::absl::StatusCode;

std::unique_ptr<v1::Verity::Stub> StubFor(const std::string& address) {
  return v1::Verity::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}
using ::verity::v1::ReadResponse;

class VerifiedReadTest : public ::testing::Test {
 protected:
  VerifiedReadTest()
      : blob_(MakeRandomTestBlob(100000,
                                 TestParams(HashAlgorithm::kSha256, 4096))) {
    server_.service().Add(blob_, "dir/blob");
    stub_ = StubFor(server_.address());
  }

  absl::StatusOr<ParsedDigest> Read(const std::string& ref,
                                    const ReadOptions& options = {}) {
    received_.clear();
    grpc::ClientContext context;
    const ByteSink sink = [this](absl::Span<const uint8_t> bytes) {
      received_.append(bytes.begin(), bytes.end());
      return absl::OkStatus();
    };
    return ReadVerified(*stub_, &context, *ParseBlobRef(ref), options, sink);
  }

  TestBlob blob_;
  FakeVerityServer server_;
  std::unique_ptr<verity::v1::Verity::Stub> stub_;
  std::string received_;
};

TEST_F(VerifiedReadTest, ByDigestAndByName) {
  for (const std::string& ref : {blob_.digest_text, std::string("dir/blob")}) {
    absl::StatusOr<ParsedDigest> digest = Read(ref);
    ASSERT_TRUE(digest.ok()) << digest.status();
    EXPECT_EQ(digest->digest, blob_.digest.digest);
    EXPECT_EQ(received_, blob_.data);
  }
  EXPECT_EQ(server_.service().last_read().name(), "dir/blob");
}

TEST_F(VerifiedReadTest, RangeAndPriorityReachTheServer) {
  ReadOptions options;
  options.offset = 5000;
  options.length = 10000;
  options.priority = verity::v1::PRIORITY_CLASS_IDLE;
  ASSERT_TRUE(Read(blob_.digest_text, options).ok());
  EXPECT_EQ(received_, blob_.data.substr(5000, 10000));
  const verity::v1::ReadRequest request = server_.service().last_read();
  EXPECT_EQ(request.offset(), 5000u);
  EXPECT_EQ(request.length(), 10000u);
  EXPECT_EQ(request.priority_class(), verity::v1::PRIORITY_CLASS_IDLE);
}

TEST_F(VerifiedReadTest, ServerErrorsKeepTheirCodes) {
  EXPECT_EQ(Read("no/such/name").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Read("sha256:" + std::string(64, '0')).status().code(),
            StatusCode::kNotFound);
  ReadOptions options;
  options.offset = 100001;
  EXPECT_EQ(Read(blob_.digest_text, options).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_TRUE(received_.empty());
}

TEST_F(VerifiedReadTest, TamperingIsDataLossAndStopsEarly) {
  server_.service().SetTamper([](std::vector<ReadResponse>* stream) {
    (*(*stream)[3].mutable_data())[17] ^= 1;
  });
  EXPECT_EQ(Read(blob_.digest_text).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(received_, blob_.data.substr(0, 3 * 4 * 4096));
  EXPECT_EQ(Read("dir/blob").status().code(), StatusCode::kDataLoss);
}

TEST_F(VerifiedReadTest, ByNameAServerCanSubstituteAConsistentBlob) {
  // Documents the limit of reading by name: the server's digest is trusted.
  const TestBlob other = MakeRandomTestBlob(
      5000, TestParams(HashAlgorithm::kSha256, 4096), /*seed=*/7);
  server_.service().SetTamper([other](std::vector<ReadResponse>* stream) {
    *stream = HonestReadStream(other, 0, std::nullopt);
  });
  EXPECT_TRUE(Read("dir/blob").ok());
  EXPECT_EQ(received_, other.data);
  // By digest, the same substitution is caught.
  EXPECT_EQ(Read(blob_.digest_text).status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(received_.empty());
}

TEST_F(VerifiedReadTest, EmptyOrCutStreamsAreDataLoss) {
  server_.service().SetTamper(
      [](std::vector<ReadResponse>* stream) { stream->clear(); });
  EXPECT_EQ(Read(blob_.digest_text).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(Read("dir/blob").status().code(), StatusCode::kDataLoss);
  server_.service().SetTamper(
      [](std::vector<ReadResponse>* stream) { stream->pop_back(); });
  EXPECT_EQ(Read(blob_.digest_text).status().code(), StatusCode::kDataLoss);
  server_.service().SetTamper([](std::vector<ReadResponse>* stream) {
    (*stream)[0].set_digest("not a digest");
  });
  EXPECT_EQ(Read("dir/blob").status().code(), StatusCode::kDataLoss);
}

TEST_F(VerifiedReadTest, SinkErrorsCancelTheRead) {
  grpc::ClientContext context;
  int calls = 0;
  const ByteSink sink = [&calls](absl::Span<const uint8_t>) {
    ++calls;
    return absl::ResourceExhaustedError("disk full");
  };
  EXPECT_EQ(
      ReadVerified(*stub_, &context, *ParseBlobRef(blob_.digest_text), {}, sink)
          .status()
          .code(),
      StatusCode::kResourceExhausted);
  EXPECT_EQ(calls, 1);
}

TEST_F(VerifiedReadTest, UnreachableServerIsUnavailable) {
  auto stub = StubFor("127.0.0.1:1");
  grpc::ClientContext context;
  const absl::Status status =
      ReadVerified(*stub, &context, *ParseBlobRef("x"), {},
                   [](absl::Span<const uint8_t>) { return absl::OkStatus(); })
          .status();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status;
}

}  // namespace
}  // namespace verity::client
