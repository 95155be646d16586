// PeerRateLimiter on a fake clock: the burst, the refill, peers apart, and
// forgetting idle peers.

#include "server/rpc/peer_rate_limiter.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace verity::server {
namespace {

class PeerRateLimiterTest : public ::testing::Test {
 protected:
  int Admitted(PeerRateLimiter& limiter, absl::string_view peer, int tries) {
    int admitted = 0;
    for (int i = 0; i < tries; ++i) admitted += limiter.Admit(peer).ok();
    return admitted;
  }

  absl::Time now_ = absl::FromUnixSeconds(1000);
  PeerRateLimiter::Clock clock_ = [this] { return now_; };
};

TEST_F(PeerRateLimiterTest, ASecondsWorthAtOnceThenTheRate) {
  PeerRateLimiter limiter(100, clock_);
  EXPECT_EQ(Admitted(limiter, "ipv4:10.0.0.1:5000", 150), 100);
  const absl::Status refused = limiter.Admit("ipv4:10.0.0.1:5000");
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("100 requests a second"),
            absl::string_view::npos)
      << refused;
  now_ += absl::Milliseconds(250);
  EXPECT_EQ(Admitted(limiter, "ipv4:10.0.0.1:5000", 100), 25);
  now_ += absl::Seconds(10);  // refills to the burst, no further
  EXPECT_EQ(Admitted(limiter, "ipv4:10.0.0.1:5000", 300), 100);
}

TEST_F(PeerRateLimiterTest, ConnectionsHaveTheirOwnBuckets) {
  PeerRateLimiter limiter(10, clock_);
  EXPECT_EQ(Admitted(limiter, "ipv4:10.0.0.1:5000", 20), 10);
  EXPECT_EQ(Admitted(limiter, "ipv4:10.0.0.1:5001", 20), 10);
  EXPECT_EQ(limiter.peers(), 2u);
}

TEST_F(PeerRateLimiterTest, IdlePeersAreForgotten) {
  PeerRateLimiter limiter(10, clock_);
  for (int port = 0; port < 1000; ++port) {
    ASSERT_TRUE(limiter.Admit(absl::StrCat("ipv4:10.0.0.1:", port)).ok());
  }
  EXPECT_EQ(limiter.peers(), 1000u);
  now_ += absl::Seconds(2);
  ASSERT_TRUE(limiter.Admit("ipv4:10.0.0.2:1").ok());
  EXPECT_EQ(limiter.peers(), 1u);
}

TEST_F(PeerRateLimiterTest, ZeroAdmitsEverything) {
  PeerRateLimiter limiter(0, clock_);
  EXPECT_EQ(Admitted(limiter, "unix:", 100000), 100000);
  EXPECT_EQ(limiter.peers(), 0u);
}

TEST_F(PeerRateLimiterTest, ARateBelowOneAdmitsOneAtATime) {
  PeerRateLimiter limiter(0.5, clock_);
  EXPECT_EQ(Admitted(limiter, "p", 5), 1);
  now_ += absl::Seconds(1);
  EXPECT_EQ(Admitted(limiter, "p", 5), 0);
  now_ += absl::Seconds(1);
  EXPECT_EQ(Admitted(limiter, "p", 5), 1);
}

TEST_F(PeerRateLimiterTest, AClockGoingBackRefillsNothing) {
  PeerRateLimiter limiter(10, clock_);
  EXPECT_EQ(Admitted(limiter, "p", 10), 10);
  now_ -= absl::Seconds(5);
  EXPECT_EQ(Admitted(limiter, "p", 10), 0);
}

}  // namespace
}  // namespace verity::server
