// BatchUpdate against a real verityd: many small blobs stored in one call and
// served verified; each blob's failure its own (a wrong digest, one over the
// per-blob limit, a full store); a request over the call's limits refused
// whole; blobs found stored told so and marked used; all of it through a
// restart. The call is admitted as a Put (--max_streams, --max_puts,
// --max_call_rate) and its data charged to max_batch_update_bytes.

#include <sys/stat.h>
#include <utime.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
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

// A Put stream held open with its header sent; cancelled when it goes.
class OpenPut {
 public:
  explicit OpenPut(TestServer& server) {
    writer_ = server.stub().Put(&context_, &response_);
    v1::PutRequest header;
    header.mutable_header();  // the default tree parameters
    EXPECT_TRUE(writer_->Write(header));
    // Admitted when its call starts; give it time to.
    absl::SleepFor(absl::Milliseconds(200));
  }
  ~OpenPut() {
    context_.TryCancel();
    writer_->Finish().IgnoreError();
  }

 private:
  grpc::ClientContext context_;
  v1::PutResponse response_;
  std::unique_ptr<grpc::ClientWriter<v1::PutRequest>> writer_;
};

// A BatchUpdate is a Put and a stream while it runs: refused whole with
// RESOURCE_EXHAUSTED while the limits are full, admitted once a slot frees.
TEST(BatchUpdateTest, CountsAsAPutAndAStream) {
  for (const bool limit_puts : {true, false}) {
    SCOPED_TRACE(limit_puts ? "--max_puts=1" : "--max_streams=1");
    server::ServerOptions options;
    (limit_puts ? options.service.max_puts : options.service.max_streams) = 1;
    auto server = TestServer::Start(options);
    const v1::BatchUpdateRequest::Blob blob = BlobOf(MakeData(3000, 1));
    {
      const OpenPut open(*server);
      EXPECT_EQ(BatchUpdate(*server, {blob}).status().code(),
                StatusCode::kResourceExhausted);
      EXPECT_FALSE(ReadBlob(server->stub(), blob.digest()).status.ok());
    }
    absl::SleepFor(absl::Milliseconds(200));  // the cancelled Put's slot
    absl::StatusOr<v1::BatchUpdateResponse> response =
        BatchUpdate(*server, {blob});
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(CodeOf(response->blobs(0)), StatusCode::kOk);
  }
}

TEST(BatchUpdateTest, CountsAgainstTheCallRate) {
  server::ServerOptions options;
  options.service.max_call_rate = 5;
  auto server = TestServer::Start(options);
  const v1::BatchUpdateRequest::Blob blob = BlobOf(MakeData(3000, 1));
  std::map<StatusCode, int> codes;
  for (int i = 0; i < 20; ++i) {
    ++codes[BatchUpdate(*server, {blob}).status().code()];
  }
  EXPECT_GE(codes[StatusCode::kOk], 5);
  EXPECT_LE(codes[StatusCode::kOk], 7);  // refilled meanwhile
  EXPECT_GE(codes[StatusCode::kResourceExhausted], 13);
}

// The data of the calls under way is charged to max_batch_update_bytes: a
// call whose blobs would go past it is refused whole, and stores nothing.
TEST(BatchUpdateTest, DataPastTheServersBudgetIsRefusedWhole) {
  server::ServerOptions options;
  options.service.max_batch_update_bytes = 1 << 20;
  auto server = TestServer::Start(options);
  const std::vector<v1::BatchUpdateRequest::Blob> over = {
      BlobOf(MakeData(600 << 10, 1)), BlobOf(MakeData(600 << 10, 2))};
  const absl::Status refused = BatchUpdate(*server, over).status();
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted) << refused;
  EXPECT_FALSE(ReadBlob(server->stub(), over[0].digest()).status.ok());
  // Within it, and again (what the first took was given back).
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<v1::BatchUpdateResponse> response =
        BatchUpdate(*server, {over[0]});
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(CodeOf(response->blobs(0)), StatusCode::kOk);
  }
}

// A blob found stored is relied on again, as a Put's: its last use (the
// file store's record mtime, last used a month ago) moves to now, so a
// collection keeps it.
TEST(BatchUpdateTest, ABlobFoundStoredIsMarkedUsed) {
  auto server = TestServer::Start();
  const std::string data = MakeData(5000, 1);
  ASSERT_TRUE(BatchUpdate(*server, {BlobOf(data)}).ok());
  // A blob this small is one record file at its path (blob_record.h).
  const std::string record = BlobDir(*server, DigestOf(data));
  const time_t month_ago = time(nullptr) - 30 * 24 * 3600;
  const struct utimbuf old = {month_ago, month_ago};
  ASSERT_EQ(utime(record.c_str(), &old), 0) << record;
  server->Restart();  // the store reads its blobs' times at Open
  absl::StatusOr<v1::BatchUpdateResponse> response =
      BatchUpdate(*server, {BlobOf(data)});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_TRUE(response->blobs(0).already_present());
  struct stat st;
  ASSERT_EQ(stat(record.c_str(), &st), 0);
  EXPECT_GT(st.st_mtime, time(nullptr) - 60);
}

}  // namespace
}  // namespace verity::testing
