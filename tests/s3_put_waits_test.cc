// verityd over an in-memory bucket whose part uploads are held back: more S3
// Puts than the I/O executor has threads wait for part slots, and Stat and
// List, whose store work runs on that executor, still answer. (The Puts'
// steps once ran there too, and a burst of large Puts stalled every read.)

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "server/store/s3/s3_client.h"
#include "server/store/s3/testing/fake_s3.h"
#include "server/store/s3/testing/fake_s3_store.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

using server::S3Request;
using server::S3Response;

// More than the 16 threads verityd's I/O executor has for a remote store.
constexpr int kPuts = 17;
constexpr size_t kPart = size_t{5} << 20;  // S3's smallest part

// FakeS3 with its UploadPart answers held until Open(): each part in flight
// keeps its slot of the part budget. Thread-safe.
class GatedS3 final : public server::S3Transport {
 public:
  using Done = absl::AnyInvocable<void(S3Response) &&>;

  void Start(S3Request request, Done done) override {
    {
      absl::MutexLock lock(&mu_);
      if (!open_ && request.op == "UploadPart") {
        held_.emplace_back(std::move(request), std::move(done));
        return;
      }
    }
    bucket_.Start(std::move(request), std::move(done));
  }

  int held() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(held_.size());
  }

  void Open() {
    std::vector<std::pair<S3Request, Done>> held;
    {
      absl::MutexLock lock(&mu_);
      open_ = true;
      held.swap(held_);
    }
    for (auto& [request, done] : held) {
      bucket_.Start(std::move(request), std::move(done));
    }
  }

 private:
  server::FakeS3 bucket_;
  mutable absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::pair<S3Request, Done>> held_ ABSL_GUARDED_BY(mu_);
};

TEST(S3PutWaitsTest, PutsWaitingForPartSlotsLeaveStatAndListAnswering) {
  auto s3 = std::make_shared<GatedS3>();
  server::ServerOptions options;
  options.store_kind = server::StoreLocation::Kind::kS3;
  options.s3 = server::FakeS3StoreOptions(s3);
  options.s3.part_bytes = kPart;
  // One slot per Put: each Put's first part, held in flight, takes it, and
  // the byte after it waits for another. No more Puts than slots: once the
  // parts go up, every Put can finish (see PartBudget).
  options.s3.part_slots = kPuts;
  auto server = TestServer::Start(options);
  const std::string small = RandomBytes(1000, 1);
  ASSERT_TRUE(PutBlob(server->stub(), small).ok());

  const std::string big = RandomBytes(kPart + 1, 2);
  std::vector<absl::Status> puts(kPuts);
  std::vector<std::thread> threads;
  for (int i = 0; i < kPuts; ++i) {
    threads.emplace_back(
        [&, i] { puts[i] = PutBlob(server->stub(), big).status(); });
  }
  // Every thread of the Puts' executor (16) waits, holding a part in flight;
  // the last Put waits for a thread.
  constexpr int kWaiting = kPuts - 1;
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while (s3->held() < kWaiting && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(s3->held(), kWaiting) << "the parts never went up";
  absl::SleepFor(absl::Milliseconds(200));

  grpc::ClientContext stat_context;
  stat_context.set_deadline(
      absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::StatRequest stat;
  stat.set_digest(DigestOf(small));
  v1::BlobInfo info;
  const grpc::Status stated = server->stub().Stat(&stat_context, stat, &info);
  EXPECT_TRUE(stated.ok()) << stated.error_message();
  grpc::ClientContext list_context;
  list_context.set_deadline(
      absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  v1::ListRequest list;
  v1::ListResponse page;
  const grpc::Status listed = server->stub().List(&list_context, list, &page);
  EXPECT_TRUE(listed.ok()) << listed.error_message();
  EXPECT_EQ(page.blobs_size(), 1);
  // Answered while every Put still waited.
  EXPECT_EQ(s3->held(), kWaiting);

  s3->Open();
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& put : puts) EXPECT_TRUE(put.ok()) << put;
  const ReadResult read = ReadBlob(server->stub(), DigestOf(big));
  EXPECT_TRUE(read.status.ok()) << read.status;
  EXPECT_TRUE(read.data == big);
}

}  // namespace
}  // namespace verity::testing
