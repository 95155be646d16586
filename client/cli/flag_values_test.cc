// Accepted and refused spellings of option values.

#include "client/cli/flag_values.h"

#include "client/testing/test_argv.h"
#include "gtest/gtest.h"

namespace verity::cli {
namespace {

TEST(FlagValuesTest, Hex) {
  EXPECT_EQ(*ParseHexFlag("salt", "a1B2"), std::string("\xa1\xb2"));
  EXPECT_EQ(*ParseHexFlag("salt", ""), "");
  EXPECT_FALSE(ParseHexFlag("salt", "abc").ok());
  EXPECT_FALSE(ParseHexFlag("salt", "zz").ok());
}

TEST(FlagValuesTest, BlockSize) {
  EXPECT_EQ(*ParseBlockSizeFlag("4096"), 4096u);
  EXPECT_FALSE(ParseBlockSizeFlag("3000").ok());
  EXPECT_FALSE(ParseBlockSizeFlag("0").ok());
  EXPECT_FALSE(ParseBlockSizeFlag("4k").ok());
}

TEST(FlagValuesTest, Uint64) {
  EXPECT_EQ(*ParseUint64Flag("--offset", "0"), 0u);
  EXPECT_EQ(*ParseUint64Flag("--offset", "18446744073709551615"), UINT64_MAX);
  for (const char* bad :
       {"", "-1", "+1", " 1", "1 ", "1e3", "18446744073709551616"}) {
    absl::StatusOr<uint64_t> value = ParseUint64Flag("--offset", bad);
    EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(
      ParseUint64Flag("--length", "x").status().message().find("--length"),
      absl::string_view::npos);
}

TEST(FlagValuesTest, Seconds) {
  EXPECT_EQ(*ParseSecondsFlag("--timeout", "60"), absl::Seconds(60));
  EXPECT_EQ(*ParseSecondsFlag("--timeout", "0.5"), absl::Milliseconds(500));
  EXPECT_EQ(*ParseSecondsFlag("--timeout", "0"), absl::ZeroDuration());
  for (const char* bad : {"", "-1", "inf", "nan", "1s", " 1", "1 ", "."}) {
    EXPECT_FALSE(ParseSecondsFlag("--timeout", bad).ok()) << bad;
  }
}

TEST(FlagValuesTest, Duration) {
  EXPECT_EQ(*ParseDurationFlag("--expires-in", "720h"), absl::Hours(720));
  EXPECT_EQ(*ParseDurationFlag("--expires-in", "1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseDurationFlag("--expires-in", "30d"), absl::Hours(720));
  EXPECT_EQ(*ParseDurationFlag("--expires-in", "1d"), absl::Hours(24));
  for (const char* bad : {"", "0", "0d", "0s", "-1h", "d", "1.5d", "-1d", "+1d",
                          "inf", "1", "1 h", "1hx", "99999999999d"}) {
    EXPECT_EQ(ParseDurationFlag("--expires-in", bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(FlagValuesTest, AsksForHelp) {
  auto asks = [](std::vector<std::string> args) {
    TestArgv argv(std::move(args));
    return AsksForHelp(argv.argc(), argv.argv());
  };
  EXPECT_TRUE(asks({"get", "--help"}));
  EXPECT_TRUE(asks({"get", "x", "--bogus", "-h"}));
  EXPECT_FALSE(asks({"get"}));
  EXPECT_FALSE(asks({"--help"}));  // argv[0] is the command itself
  EXPECT_FALSE(asks({"get", "--", "--help"}));
  EXPECT_FALSE(asks({"get", "--helpful", "-hx"}));
}

}  // namespace
}  // namespace verity::cli
