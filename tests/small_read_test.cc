// ReadSmall end to end, in process: its one message is exactly the message a
// Read stream of the same request starts with, for every kind of range and
// held tree; a range past its limit is INVALID_ARGUMENT; corruption is
// DATA_LOSS with no message. Its checks and error codes are Read's
// (server_test.cc BadReadsGetTheRightCode), and so is where it is verified
// (dispatch_test.cc).

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/read_plan.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kBlock = 4096;

// The messages of a Read stream of `request`, serialized.
std::vector<std::string> StreamMessages(v1::Verity::Stub& stub,
                                        const v1::ReadRequest& request) {
  grpc::ClientContext context;
  auto reader = stub.Read(&context, request);
  std::vector<std::string> messages;
  for (v1::ReadResponse response; reader->Read(&response);) {
    messages.push_back(response.SerializeAsString());
  }
  EXPECT_TRUE(reader->Finish().ok());
  return messages;
}

grpc::Status ReadSmall(v1::Verity::Stub& stub, const v1::ReadRequest& request,
                       v1::ReadResponse* response) {
  grpc::ClientContext context;
  return stub.ReadSmall(&context, request, response);
}

class SmallReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = TestServer::Start();
    // Three tree levels' worth of blocks would take 64 MiB; two levels and
    // a short last block show every shape a proof takes.
    data_ = RandomBytes(300 * kBlock + 123, 21);
    ASSERT_TRUE(PutBlob(server_->stub(), data_).ok());
    digest_ = DigestOf(data_);
  }

  v1::ReadRequest Request(uint64_t offset, uint64_t length) const {
    v1::ReadRequest request;
    request.set_digest(digest_);
    request.set_offset(offset);
    request.set_length(length);
    return request;
  }

  std::unique_ptr<TestServer> server_;
  std::string data_;
  std::string digest_;
};

TEST_F(SmallReadTest, IsTheFirstMessageOfTheSameRead) {
  const uint64_t max = kMaxSmallReadBytes;
  struct Case {
    uint64_t offset;
    uint64_t length;  // 0: to the end
  };
  const std::vector<Case> ranges = {
      {0, 1},
      {kBlock - 1, 2},  // two blocks
      {5 * kBlock + 7, 3 * kBlock},
      {0, max},                        // exactly the limit
      {kBlock + 1, max - kBlock - 1},  // the limit, unaligned
      {data_.size() - 100, 0},         // the short last block
      {data_.size() / kBlock * kBlock - max + kBlock + 100,
       0},                // to the end, at the limit
      {data_.size(), 0},  // empty, at the end
  };
  for (const Case& c : ranges) {
    SCOPED_TRACE(absl::StrCat(c.offset, "+", c.length));
    for (int held = 0; held < 3; ++held) {
      v1::ReadRequest request = Request(c.offset, c.length);
      if (held == 1) request.set_have_whole_tree(true);
      if (held == 2) request.add_have_tree_blocks(0);  // the top block
      v1::ReadResponse small;
      const grpc::Status status = ReadSmall(server_->stub(), request, &small);
      ASSERT_TRUE(status.ok()) << status.error_message();
      const std::vector<std::string> stream =
          StreamMessages(server_->stub(), request);
      ASSERT_EQ(stream.size(), 1u);
      EXPECT_EQ(small.SerializeAsString(), stream[0]) << held;
      const uint64_t end = c.length == 0 ? data_.size() : c.offset + c.length;
      const uint64_t first = c.offset / kBlock * kBlock;
      EXPECT_EQ(small.data_offset(), small.data().empty() ? 0 : first);
      EXPECT_EQ(small.data(), data_.substr(first, small.data().size()));
      if (end > c.offset) EXPECT_GE(first + small.data().size(), end);
      EXPECT_EQ(small.tree_blocks_size() > 0, held != 1 && end > c.offset);
    }
  }
}

TEST_F(SmallReadTest, ARangeOverTheLimitIsInvalidArgument) {
  v1::ReadResponse response;
  // One byte too many, or one block too many once rounded out.
  for (const v1::ReadRequest& request :
       {Request(0, kMaxSmallReadBytes + 1), Request(1, kMaxSmallReadBytes),
        Request(0, 0)}) {
    const grpc::Status status = ReadSmall(server_->stub(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("use Read"));
  }
  // Past the end is OUT_OF_RANGE first, as for Read.
  EXPECT_EQ(ReadSmall(server_->stub(), Request(data_.size() + 1, 1), &response)
                .error_code(),
            grpc::StatusCode::OUT_OF_RANGE);
}

TEST_F(SmallReadTest, ByNameCarriesWhatReadCarries) {
  ASSERT_TRUE(
      PutBlob(server_->stub(), "named content", MerkleParams(), "a/b").ok());
  v1::ReadRequest request;
  request.set_name("a/b");
  v1::ReadResponse small;
  ASSERT_TRUE(ReadSmall(server_->stub(), request, &small).ok());
  EXPECT_EQ(small.digest(), DigestOf("named content"));
  EXPECT_EQ(small.data(), "named content");
  EXPECT_EQ(small.SerializeAsString(),
            StreamMessages(server_->stub(), request)[0]);
}

TEST_F(SmallReadTest, CorruptionIsDataLossWithNoMessage) {
  FlipBit(BlobDir(*server_, digest_) + "/data", 7 * kBlock + 5);
  v1::ReadResponse response;
  const grpc::Status bad =
      ReadSmall(server_->stub(), Request(6 * kBlock, 2 * kBlock), &response);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::DATA_LOSS);
  EXPECT_THAT(bad.error_message(), HasSubstr(digest_));
  EXPECT_TRUE(response.data().empty());
  // A range that avoids the bad block still reads.
  response.Clear();
  ASSERT_TRUE(
      ReadSmall(server_->stub(), Request(0, 7 * kBlock), &response).ok());
  EXPECT_EQ(response.data(), data_.substr(0, 7 * kBlock));
}

// Calls cut short at every point of their life (before the server sees
// them, while reading or verifying inline or on the pool, while sending) end
// with a code and free their slot; the server serves on. The reactor's
// OnCancel() and OnDone() run on gRPC's threads as the calls end.
TEST_F(SmallReadTest, CancelledCallsEndAndFreeTheirSlots) {
  constexpr int kCalls = 300;
  struct Call {
    grpc::ClientContext context;
    v1::ReadResponse response;
    grpc::Status status;
  };
  std::vector<Call> calls(kCalls);
  absl::Mutex mu;
  int done = 0;
  for (int i = 0; i < kCalls; ++i) {
    Call& call = calls[i];
    // 4 KiB is verified inline, 256 KiB on the pool.
    const uint64_t length = i % 2 == 0 ? kBlock : kMaxSmallReadBytes;
    call.context.set_deadline(std::chrono::system_clock::now() +
                              std::chrono::microseconds(i * 997 % 200000));
    const v1::ReadRequest request = Request(i % 40 * kBlock, length);
    server_->stub().async()->ReadSmall(&call.context, &request, &call.response,
                                       [&, i](grpc::Status status) {
                                         calls[i].status = std::move(status);
                                         absl::MutexLock lock(&mu);
                                         ++done;
                                       });
  }
  for (int i = 0; i < kCalls; i += 3) calls[i].context.TryCancel();
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == kCalls; }, &done));
  }
  for (const Call& call : calls) {
    EXPECT_THAT(
        call.status.error_code(),
        ::testing::AnyOf(grpc::StatusCode::OK, grpc::StatusCode::CANCELLED,
                         grpc::StatusCode::DEADLINE_EXCEEDED))
        << call.status.error_message();
  }
  // A server ends a cancelled call after the client has seen it end.
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (server_->verityd().active_streams() != 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(server_->verityd().active_streams(), 0);
  v1::ReadResponse response;
  ASSERT_TRUE(
      ReadSmall(server_->stub(), Request(0, kMaxSmallReadBytes), &response)
          .ok());
  EXPECT_EQ(response.data(), data_.substr(0, kMaxSmallReadBytes));
}

}  // namespace
}  // namespace verity::testing
