// FakeS3's answer timing: inline by default (what the store's fault matrix
// relies on), and with answer_gets_later, blob reads answered after Start()
// returns, on another thread; destroying the fake answers what still waits.

#include "server/store/s3/testing/fake_s3.h"

#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace verity::server {
namespace {

constexpr char kBody[] = "0123456789abcdef";

void PutObject(FakeS3& s3, const std::string& key) {
  S3Request request;
  request.op = "PutObject";
  request.method = "PUT";
  request.key = key;
  request.body = kBody;
  bool answered = false;
  s3.Start(std::move(request), [&](S3Response response) {
    EXPECT_TRUE(response.status.ok()) << response.status;
    answered = true;
  });
  EXPECT_TRUE(answered) << "a PUT is answered at once";
}

// A read of bytes [4, 12) into `into`.
S3Request RangedGet(const std::string& key, std::string* into) {
  S3Request request;
  request.op = "GetData";
  request.key = key;
  request.headers.push_back("Range: bytes=4-11");
  into->assign(8, '\0');
  request.into = absl::MakeSpan(reinterpret_cast<uint8_t*>(into->data()), 8);
  return request;
}

TEST(FakeS3Test, AnswersEveryRequestAtOnceByDefault) {
  FakeS3 s3;
  PutObject(s3, "k");
  std::string into;
  bool answered = false;
  s3.Start(RangedGet("k", &into), [&](S3Response response) {
    EXPECT_TRUE(response.status.ok()) << response.status;
    answered = true;
  });
  EXPECT_TRUE(answered);
  EXPECT_EQ(into, "456789ab");
  EXPECT_EQ(s3.answered_later(), 0);
}

TEST(FakeS3Test, AnswersBlobReadsLaterOnAnotherThread) {
  FakeS3Options options;
  options.answer_gets_later = true;
  options.max_get_delay = absl::Milliseconds(20);
  FakeS3 s3(options);
  PutObject(s3, "k");
  for (int i = 0; i < 5; ++i) {
    std::string into;
    absl::Notification answered;
    std::thread::id answered_on;
    std::string seen;
    // Held until Start() has returned: a `done` run inside it would block.
    absl::Notification started;
    s3.Start(RangedGet("k", &into), [&](S3Response response) {
      started.WaitForNotification();
      EXPECT_TRUE(response.status.ok()) << response.status;
      EXPECT_EQ(response.bytes, 8u);
      answered_on = std::this_thread::get_id();
      seen = into;
      answered.Notify();
    });
    started.Notify();
    answered.WaitForNotification();
    EXPECT_NE(answered_on, std::this_thread::get_id());
    EXPECT_EQ(seen, "456789ab");
  }
  EXPECT_EQ(s3.answered_later(), 5);
}

TEST(FakeS3Test, DestroyingItAnswersTheReadsStillWaiting) {
  FakeS3Options options;
  options.answer_gets_later = true;
  options.max_get_delay = absl::Hours(1);
  auto s3 = std::make_unique<FakeS3>(options);
  PutObject(*s3, "k");
  std::string into;
  int answers = 0;
  s3->Start(RangedGet("k", &into), [&](S3Response response) {
    EXPECT_TRUE(response.status.ok()) << response.status;
    ++answers;
  });
  s3.reset();
  EXPECT_EQ(answers, 1);
  EXPECT_EQ(into, "456789ab");
}

}  // namespace
}  // namespace verity::server
