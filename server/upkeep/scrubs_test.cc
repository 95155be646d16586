// A server's scrubbing: a pass asked for and waited for, the byte rate it
// keeps to, the interval, and a stop that ends a pass and its waiters.

#include "server/upkeep/scrubs.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/upkeep/testing/upkeep_stores.h"

namespace verity::server {
namespace {

class ScrubsTest : public UpkeepTest {
 protected:
  void SetUp() override { Open(1); }

  ScrubsOptions Options() {
    ScrubsOptions options;
    options.retry = absl::Milliseconds(100);
    options.log = [this](absl::string_view line) {
      absl::MutexLock lock(&mu_);
      log_.push_back(std::string(line));
    };
    return options;
  }

  absl::Mutex mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
};

TEST_P(ScrubsTest, RunsAPassWhenAskedAndAnswersWhatItFound) {
  for (int i = 0; i < 3; ++i) Put(absl::StrCat("blob ", i));
  Scrubs scrubs(store_, nullptr, Options());
  scrubs.Start("test");
  absl::StatusOr<ScrubStatus> status = scrubs.RunNow(/*wait=*/true);
  ASSERT_TRUE(status.ok()) << status.status();
  ASSERT_TRUE(status->report.has_value());
  EXPECT_EQ(status->report->blobs, 3u);
  EXPECT_EQ(status->position.started, absl::UnixEpoch());
  EXPECT_EQ(status->position.completed, status->report->completed);
  // Without wait: where it stands, at once.
  absl::StatusOr<ScrubStatus> asked = scrubs.RunNow(/*wait=*/false);
  ASSERT_TRUE(asked.ok()) << asked.status();
  EXPECT_FALSE(asked->report.has_value());
}

TEST_P(ScrubsTest, ReadsNoFasterThanItsRate) {
  const std::string data(1 << 20, 'x');
  for (int i = 0; i < 3; ++i) Put(absl::StrCat(i, data));
  ScrubsOptions options = Options();
  options.bytes_per_second = 1 << 20;
  Scrubs scrubs(store_, nullptr, options);
  scrubs.Start("test");
  const absl::Time start = absl::Now();
  absl::StatusOr<ScrubStatus> status = scrubs.RunNow(/*wait=*/true);
  ASSERT_TRUE(status.ok()) << status.status();
  // Over 3 MiB at 1 MiB/s: the last read waits for the first two MiB.
  EXPECT_GT(status->report->bytes, uint64_t{3} << 20);
  EXPECT_GE(absl::Now() - start, absl::Seconds(2));
}

TEST_P(ScrubsTest, RunsEveryInterval) {
  Put("a blob");
  ScrubsOptions options = Options();
  options.interval = absl::Milliseconds(200);
  Scrubs scrubs(store_, nullptr, options);
  scrubs.Start("test");
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  int completed = 0;
  while (completed < 3 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
    absl::MutexLock lock(&mu_);
    completed = 0;
    for (const std::string& line : log_) {
      completed += line.rfind("scrub pass completed", 0) == 0;
    }
  }
  EXPECT_GE(completed, 3);
}

TEST_P(ScrubsTest, StopEndsAPassAndItsWaiters) {
  const std::string data(1 << 20, 'y');
  for (int i = 0; i < 4; ++i) Put(absl::StrCat(i, data));
  ScrubsOptions options = Options();
  options.bytes_per_second = 1 << 18;  // 16 s for the store
  Scrubs scrubs(store_, nullptr, options);
  scrubs.Start("test");
  absl::StatusOr<ScrubStatus> waited;
  std::thread waiter([&] { waited = scrubs.RunNow(/*wait=*/true); });
  absl::SleepFor(absl::Milliseconds(500));
  const absl::Time stop = absl::Now();
  scrubs.Stop();
  waiter.join();
  EXPECT_LT(absl::Now() - stop, absl::Seconds(5));
  EXPECT_TRUE(absl::IsCancelled(waited.status())) << waited.status();
  // The pass is on record as under way, to resume.
  absl::StatusOr<ScrubPosition> position = ReadScrubPosition(*store_);
  ASSERT_TRUE(position.ok()) << position.status();
  EXPECT_NE(position->started, absl::UnixEpoch());
}

INSTANTIATE_TEST_SUITE_P(BothStores, ScrubsTest,
                         ::testing::Values(StoreFactory(NewTestFileStore),
                                           StoreFactory(NewTestS3Store)));

}  // namespace
}  // namespace verity::server
