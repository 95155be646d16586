// S3Client against a real radosgw (tests/testing/ceph_cluster.sh starts one and
// exports S3_ENDPOINT, S3_BUCKET, AWS_REGION and the credentials): every
// request kind verityd sends, S3's error answers, and the retries and timeouts
// when the endpoint is gone.

#include "server/store/s3/s3_client.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "server/store/s3/s3_xml.h"
#include "server/store/s3/testing/radosgw.h"

namespace verity::server {
namespace {

class S3ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(HaveTestRadosgw())
        << "run through tests/testing/ceph_cluster.sh, which sets S3_*";
    absl::StatusOr<std::unique_ptr<S3Client>> client =
        S3Client::Create(TestRadosgwOptions());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    prefix_ = absl::StrCat(
        "s3-client-test/",
        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "/");
  }

  S3Response Put(const std::string& key, std::string body,
                 std::vector<std::string> headers = {}) {
    S3Request request;
    request.op = "PutObject";
    request.method = "PUT";
    request.key = prefix_ + key;
    request.body = std::move(body);
    request.headers = std::move(headers);
    return client_->Call(std::move(request));
  }

  S3Response Get(const std::string& key, std::vector<std::string> headers = {},
                 absl::Span<uint8_t> into = {}) {
    S3Request request;
    request.op = "GetObject";
    request.key = prefix_ + key;
    request.headers = std::move(headers);
    request.into = into;
    return client_->Call(std::move(request));
  }

  std::unique_ptr<S3Client> client_;
  std::string prefix_;
};

TEST_F(S3ClientTest, PutGetRangesHeadDelete) {
  const std::string body = "0123456789abcdef";
  S3Response put = Put("object", body);
  ASSERT_TRUE(put.status.ok()) << put.status;
  EXPECT_FALSE(put.etag.empty());
  EXPECT_EQ(Get("object").body, body);
  EXPECT_EQ(Get("object", {"Range: bytes=4-7"}).body, "4567");
  std::string buffer(4, '\0');
  S3Response into =
      Get("object", {"Range: bytes=12-15"}, AsMutableBytes(&buffer));
  ASSERT_TRUE(into.status.ok()) << into.status;
  EXPECT_EQ(into.bytes, 4u);
  EXPECT_EQ(buffer, "cdef");
  EXPECT_EQ(Get("object", {"Range: bytes=100-200"}).status.code(),
            absl::StatusCode::kOutOfRange);
  S3Request head;
  head.op = "HeadObject";
  head.method = "HEAD";
  head.key = prefix_ + "object";
  EXPECT_TRUE(client_->Call(head).status.ok());
  S3Request remove;
  remove.op = "DeleteObject";
  remove.method = "DELETE";
  remove.key = prefix_ + "object";
  EXPECT_TRUE(client_->Call(remove).status.ok());
  S3Response gone = Get("object");
  EXPECT_EQ(gone.status.code(), absl::StatusCode::kNotFound) << gone.status;
  EXPECT_EQ(gone.error_code, "NoSuchKey");
  EXPECT_EQ(client_->Call(head).status.code(), absl::StatusCode::kNotFound);
}

TEST_F(S3ClientTest, PutIfAbsent) {
  ASSERT_TRUE(Put("once", "first", {"If-None-Match: *"}).status.ok());
  S3Response again = Put("once", "second", {"If-None-Match: *"});
  EXPECT_EQ(again.status.code(), absl::StatusCode::kFailedPrecondition)
      << again.status;
  EXPECT_EQ(again.http_status, 412);
  EXPECT_EQ(Get("once").body, "first");
}

TEST_F(S3ClientTest, AGetLargerThanItsBufferFails) {
  ASSERT_TRUE(Put("big", std::string(1000, 'x')).status.ok());
  std::string small(10, '\0');
  S3Response response = Get("big", {}, AsMutableBytes(&small));
  EXPECT_EQ(response.status.code(), absl::StatusCode::kDataLoss)
      << response.status;
  EXPECT_EQ(response.attempts, 1);
}

TEST_F(S3ClientTest, MultipartUpload) {
  S3Request create;
  create.op = "CreateMultipartUpload";
  create.method = "POST";
  create.key = prefix_ + "parts";
  create.query = {{"uploads", ""}};
  create.idempotent = false;
  S3Response created = client_->Call(create);
  ASSERT_TRUE(created.status.ok()) << created.status;
  absl::StatusOr<std::string> upload_id = ParseUploadId(created.body);
  ASSERT_TRUE(upload_id.ok()) << upload_id.status();
  // Every part but the last must be at least 5 MiB.
  const std::vector<std::string> parts = {std::string(5 << 20, 'a'),
                                          std::string(5 << 20, 'b'), "tail"};
  std::vector<std::string> etags;
  for (size_t i = 0; i < parts.size(); ++i) {
    S3Request part;
    part.op = "UploadPart";
    part.method = "PUT";
    part.key = prefix_ + "parts";
    part.query = {{"partNumber", absl::StrCat(i + 1)},
                  {"uploadId", *upload_id}};
    part.body = parts[i];
    S3Response uploaded = client_->Call(part);
    ASSERT_TRUE(uploaded.status.ok()) << uploaded.status;
    etags.push_back(uploaded.etag);
  }
  S3Request complete;
  complete.op = "CompleteMultipartUpload";
  complete.method = "POST";
  complete.key = prefix_ + "parts";
  complete.query = {{"uploadId", *upload_id}};
  complete.body = CompleteMultipartBody(etags);
  S3Response completed = client_->Call(complete);
  ASSERT_TRUE(completed.status.ok()) << completed.status << completed.body;
  S3Response tail = Get(
      "parts", {absl::StrCat("Range: bytes=", 10 << 20, "-", (10 << 20) + 3)});
  EXPECT_EQ(tail.body, "tail");
  EXPECT_EQ(Get("parts", {"Range: bytes=5242879-5242880"}).body, "ab");
}

TEST_F(S3ClientTest, ListObjects) {
  for (const char* key : {"list/a", "list/b", "list/c/d"}) {
    ASSERT_TRUE(Put(key, key).status.ok());
  }
  S3Request list;
  list.op = "ListObjectsV2";
  list.query = {
      {"list-type", "2"}, {"prefix", prefix_ + "list/"}, {"max-keys", "2"}};
  S3Response first = client_->Call(list);
  ASSERT_TRUE(first.status.ok()) << first.status;
  absl::StatusOr<S3Listing> page = ParseListObjects(first.body);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, prefix_ + "list/a");
  EXPECT_EQ(page->objects[0].size, 6u);  // "list/a"
  ASSERT_TRUE(page->truncated);
  list.query.push_back({"continuation-token", page->next_continuation_token});
  page = ParseListObjects(client_->Call(list).body);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, prefix_ + "list/c/d");
  EXPECT_FALSE(page->truncated);
}

TEST_F(S3ClientTest, KeysNeedingEscapes) {
  const std::string key = "odd key+with=chars&%~";
  ASSERT_TRUE(Put(key, "x").status.ok());
  EXPECT_EQ(Get(key).body, "x");
}

TEST_F(S3ClientTest, WrongCredentialsAreRefused) {
  S3ClientOptions options = TestRadosgwOptions();
  options.credentials.secret_access_key = "wrong";
  std::unique_ptr<S3Client> client = *S3Client::Create(options);
  S3Request request;
  request.op = "GetObject";
  request.key = prefix_ + "x";
  S3Response response = client->Call(request);
  EXPECT_EQ(response.status.code(), absl::StatusCode::kPermissionDenied)
      << response.status;
  EXPECT_EQ(response.attempts, 1);  // a 403 is not retried
}

TEST_F(S3ClientTest, AnUnreachableEndpointIsRetriedThenUnavailable) {
  S3ClientOptions options = TestRadosgwOptions();
  options.endpoint = "http://127.0.0.1:1";  // nothing listens on port 1
  options.max_attempts = 3;
  options.backoff = absl::Milliseconds(20);
  int observed = 0;
  options.observe = [&observed](absl::string_view, int http, absl::Duration,
                                uint64_t) {
    EXPECT_EQ(http, 0);
    ++observed;
  };
  std::unique_ptr<S3Client> client = *S3Client::Create(options);
  S3Request request;
  request.op = "GetObject";
  request.key = "anything";
  const absl::Time start = absl::Now();
  S3Response response = client->Call(request);
  EXPECT_EQ(response.status.code(), absl::StatusCode::kUnavailable)
      << response.status;
  EXPECT_EQ(response.attempts, 3);
  EXPECT_EQ(observed, 3);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  // Not idempotent: one attempt.
  request.idempotent = false;
  EXPECT_EQ(client->Call(request).attempts, 1);
}

TEST_F(S3ClientTest, BadOptionsAreRefusedAtCreate) {
  S3ClientOptions options = TestRadosgwOptions();
  options.endpoint = "ftp://x";
  EXPECT_EQ(S3Client::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = TestRadosgwOptions();
  options.bucket = "";
  EXPECT_EQ(S3Client::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = TestRadosgwOptions();
  options.credentials = {};
  EXPECT_EQ(S3Client::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(S3EscapeTest, UnreservedStayAndTheRestIsPercentEncoded) {
  EXPECT_EQ(S3Escape("aZ09-_.~", false), "aZ09-_.~");
  EXPECT_EQ(S3Escape("a/b c+=", false), "a%2Fb%20c%2B%3D");
  EXPECT_EQ(S3Escape("a/b c", true), "a/b%20c");
}

}  // namespace
}  // namespace verity::server
