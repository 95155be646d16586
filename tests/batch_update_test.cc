// BatchUpdate against a real verityd: many small blobs stored in one call and
// served verified; each blob's failure its own (a wrong digest, one over the
// per-blob limit, a full store); a request over the call's limits refused
// whole; blobs found stored told so; all of it through a restart.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

v1::BatchUpdateRequest::Blob BlobOf(const std::string& data) {
  v1::BatchUpdateRequest::Blob blob;
  blob.set_digest(DigestOf(data));
  blob.set_data(data);
  return blob;
}

absl::StatusOr<v1::BatchUpdateResponse> BatchUpdate(
    TestServer& server,
    const std::vector<v1::BatchUpdateRequest::Blob>& blobs) {
  v1::BatchUpdateRequest request;
  for (const v1::BatchUpdateRequest::Blob& blob : blobs) {
    *request.add_blobs() = blob;
  }
  v1::BatchUpdateResponse response;
  grpc::ClientContext context;
  const grpc::Status status =
      server.stub().BatchUpdate(&context, request, &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        status.error_message());
  }
  return response;
}

StatusCode CodeOf(const v1::BatchUpdateResponse::Blob& blob) {
  return static_cast<StatusCode>(blob.code());
}

TEST(BatchUpdateTest, StoresEveryBlobAndServesItVerified) {
  auto server = TestServer::Start();
  std::vector<std::string> datas;
  std::vector<v1::BatchUpdateRequest::Blob> blobs;
  for (uint64_t i = 0; i < 200; ++i) {
    datas.push_back(MakeData(1000 + 97 * i, i));
    blobs.push_back(BlobOf(datas.back()));
  }
  absl::StatusOr<v1::BatchUpdateResponse> response =
      BatchUpdate(*server, blobs);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->blobs_size(), 200);
  for (const v1::BatchUpdateResponse::Blob& blob : response->blobs()) {
    EXPECT_EQ(CodeOf(blob), StatusCode::kOk) << blob.message();
    EXPECT_FALSE(blob.already_present());
  }
  server->Restart();
  for (const std::string& data : datas) {
    const ReadResult read = ReadBlob(server->stub(), DigestOf(data));
    ASSERT_TRUE(read.status.ok()) << read.status;
    EXPECT_TRUE(read.data == data);
  }
  // Again: each found stored.
  response = BatchUpdate(*server, blobs);
  ASSERT_TRUE(response.ok()) << response.status();
  for (const v1::BatchUpdateResponse::Blob& blob : response->blobs()) {
    EXPECT_TRUE(blob.already_present());
  }
}

TEST(BatchUpdateTest, EachBlobFailsAlone) {
  auto server = TestServer::Start();
  const std::string good = MakeData(5000, 1);
  v1::BatchUpdateRequest::Blob lying = BlobOf(MakeData(5000, 2));
  lying.set_data(MakeData(5000, 3));
  v1::BatchUpdateRequest::Blob large = BlobOf(MakeData((1 << 20) + 1, 4));
  v1::BatchUpdateRequest::Blob nameless = BlobOf(MakeData(10, 5));
  nameless.clear_digest();
  v1::BatchUpdateRequest::Blob other_algorithm = BlobOf(MakeData(10, 6));
  other_algorithm.mutable_params()->set_hash_algorithm(v1::SHA512);
  absl::StatusOr<v1::BatchUpdateResponse> response = BatchUpdate(
      *server, {BlobOf(good), lying, large, nameless, other_algorithm});
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->blobs_size(), 5);
  EXPECT_EQ(CodeOf(response->blobs(0)), StatusCode::kOk);
  EXPECT_EQ(CodeOf(response->blobs(1)), StatusCode::kDataLoss)
      << response->blobs(1).message();
  EXPECT_EQ(CodeOf(response->blobs(2)), StatusCode::kInvalidArgument);
  EXPECT_NE(response->blobs(2).message().find("send it with Put"),
            std::string::npos);
  EXPECT_EQ(CodeOf(response->blobs(3)), StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(response->blobs(4)), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ReadBlob(server->stub(), DigestOf(good)).status.ok());
  EXPECT_FALSE(ReadBlob(server->stub(), lying.digest()).status.ok());
}

TEST(BatchUpdateTest, ARequestOverTheCallsLimitsIsRefusedWhole) {
  auto server = TestServer::Start();
  std::vector<v1::BatchUpdateRequest::Blob> many(1001, BlobOf("x"));
  EXPECT_EQ(BatchUpdate(*server, many).status().code(),
            StatusCode::kInvalidArgument);
  std::vector<v1::BatchUpdateRequest::Blob> big;
  for (uint64_t i = 0; i < 5; ++i) {
    big.push_back(BlobOf(MakeData(1 << 20, 10 + i)));
  }
  EXPECT_EQ(BatchUpdate(*server, big).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(ReadBlob(server->stub(), big[0].digest()).status.ok());
}

TEST(BatchUpdateTest, ABlobThatWouldFillTheStoreFailsAlone) {
  server::ServerOptions options;
  options.max_store_bytes = 10000;
  auto server = TestServer::Start(options);
  absl::StatusOr<v1::BatchUpdateResponse> response = BatchUpdate(
      *server, {BlobOf(MakeData(6000, 1)), BlobOf(MakeData(6000, 2)),
                BlobOf(MakeData(3000, 3))});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(CodeOf(response->blobs(0)), StatusCode::kOk);
  EXPECT_EQ(CodeOf(response->blobs(1)), StatusCode::kResourceExhausted);
  EXPECT_EQ(CodeOf(response->blobs(2)), StatusCode::kOk);
}

}  // namespace
}  // namespace verity::testing
