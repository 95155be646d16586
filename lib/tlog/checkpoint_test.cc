// Checkpoint text: written and parsed as C2SP tlog-checkpoint has it.

#include "lib/tlog/checkpoint.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace verity::tlog {
namespace {

TEST(CheckpointTest, RoundTrip) {
  Checkpoint checkpoint{"example.com/log", 20852163, LeafHash("x"), {}};
  const std::string text = checkpoint.ToText();
  EXPECT_EQ(text, "example.com/log\n20852163\n" +
                      LogHashToBase64(LeafHash("x")) + "\n");
  absl::StatusOr<Checkpoint> parsed = Checkpoint::Parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->origin, "example.com/log");
  EXPECT_EQ(parsed->size, 20852163u);
  EXPECT_EQ(parsed->root, LeafHash("x"));
  EXPECT_TRUE(parsed->extensions.empty());

  checkpoint.extensions = {"ext one", "two"};
  parsed = Checkpoint::Parse(checkpoint.ToText());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->extensions, checkpoint.extensions);
  EXPECT_TRUE(
      Checkpoint::Parse("o\n0\n" + LogHashToBase64(EmptyTreeHash()) + "\n")
          .ok());
}

TEST(CheckpointTest, RefusesWhatIsNotACheckpoint) {
  const std::string root = LogHashToBase64(LeafHash("x"));
  for (const std::string& bad : std::vector<std::string>{
           "o\n5\n" + root,          // no final newline
           "o\n5\n",                 // no root
           "\n5\n" + root + "\n",    // no origin
           "o\n05\n" + root + "\n",  // a leading zero
           "o\n+5\n" + root + "\n",  // a sign
           "o\n-1\n" + root + "\n",
           "o\n18446744073709551616\n" + root + "\n",  // 2^64
           "o\n5\nAAAA\n",                             // not 32 bytes
           "o\n5\n" + root + "\n\n",  // an empty extension line
       }) {
    EXPECT_FALSE(Checkpoint::Parse(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace verity::tlog
