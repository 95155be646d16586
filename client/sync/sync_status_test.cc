#include "client/sync/sync_status.h"

#include "gtest/gtest.h"

namespace verity::sync {
namespace {

using ::absl::StatusCode;

const absl::Time kNow = absl::FromUnixSeconds(1796381433);

TEST(SyncStatusTest, StartingOkAndFailing) {
  SyncState state;
  state.last_attempt = kNow;
  EXPECT_EQ(StatusText(state),
            "state: starting\ndigest: \nversion: 0\nlast_success: never\n"
            "last_attempt: 2026-12-04T10:50:33Z\nlast_error: \nswitches: 0\n");
  state.digest = "sha256:ab";
  state.version = 3;
  state.last_success = kNow;
  state.switches = 1;
  EXPECT_EQ(StatusText(state),
            "state: ok\ndigest: sha256:ab\nversion: 3\n"
            "last_success: 2026-12-04T10:50:33Z\n"
            "last_attempt: 2026-12-04T10:50:33Z\nlast_error: \nswitches: 1\n");
  state.last_error = "refused\nstate: ok";
  EXPECT_EQ(StatusText(state).substr(0, 15), "state: failing\n");
  EXPECT_NE(StatusText(state).find("last_error: refused\\nstate: ok\n"),
            std::string::npos);
}

TEST(SyncStatusTest, ReadyOnceAVersionIsInPlaceAndRecentEnough) {
  SyncState state;
  state.last_attempt = kNow;
  EXPECT_EQ(
      CheckReady(StatusText(state), absl::InfiniteDuration(), kNow).code(),
      StatusCode::kUnavailable);
  state.digest = "sha256:ab";
  state.last_success = kNow - absl::Minutes(3);
  const std::string text = StatusText(state);
  EXPECT_TRUE(CheckReady(text, absl::InfiniteDuration(), kNow).ok());
  EXPECT_TRUE(CheckReady(text, absl::Minutes(5), kNow).ok());
  const absl::Status stale = CheckReady(text, absl::Minutes(2), kNow);
  EXPECT_EQ(stale.code(), StatusCode::kUnavailable);
  EXPECT_NE(stale.message().find("(last: 2026-12-04T10:47:33Z)"),
            std::string::npos)
      << stale;
  EXPECT_EQ(CheckReady("garbage", absl::Minutes(2), kNow).code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace verity::sync
