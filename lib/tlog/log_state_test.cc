// The log's state record: what Encode() writes Decode() reads, and nothing
// else.

#include "lib/tlog/log_state.h"

#include <string>

#include "gtest/gtest.h"

namespace verity::tlog {
namespace {

TEST(LogStateTest, RoundTrip) {
  LogState state;
  state.checkpoint = "origin\n3\nROOT\n\n\xe2\x80\x94 origin AAAA\n";
  state.size = 3;
  state.batch = "batches/abc";
  state.batch_from = 1;
  state.batch_from_root = LeafHash("x");
  absl::StatusOr<LogState> back = LogState::Decode(state.Encode());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->checkpoint, state.checkpoint);
  EXPECT_EQ(back->size, 3u);
  EXPECT_EQ(back->batch, "batches/abc");
  EXPECT_EQ(back->batch_from, 1u);
  EXPECT_EQ(back->batch_from_root, LeafHash("x"));
  state.batch.clear();
  EXPECT_TRUE(LogState::Decode(state.Encode())->batch.empty());
}

TEST(LogStateTest, RefusesOtherBodies) {
  LogState state;
  state.size = 3;
  state.batch_from = 1;
  const std::string good = state.Encode();
  EXPECT_FALSE(LogState::Decode("").ok());
  EXPECT_FALSE(LogState::Decode(good.substr(1)).ok());
  // batch-from beyond the size, a size that is not a number, no blank line.
  state.batch_from = 4;
  EXPECT_FALSE(LogState::Decode(state.Encode()).ok());
  std::string bad = good;
  bad.replace(bad.find("size 3"), 6, "size x");
  EXPECT_FALSE(LogState::Decode(bad).ok());
  bad = good;
  bad.erase(bad.find("\n\n"), 1);
  EXPECT_FALSE(LogState::Decode(bad).ok());
}

}  // namespace
}  // namespace verity::tlog
