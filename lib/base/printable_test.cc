// Printable: what a terminal could act on is escaped, text is not; IsUtf8.

#include "lib/base/printable.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace verity {
namespace {

TEST(PrintableTest, EscapesWhatATerminalActsOn) {
  EXPECT_EQ(Printable("plain text: a/b.c"), "plain text: a/b.c");
  EXPECT_EQ(Printable("two\nlines\r\t"), "two\\nlines\\r\\t");
  EXPECT_EQ(Printable("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(Printable(std::string("nul\0", 4)), "nul\\x00");
  EXPECT_EQ(Printable("back\\slash"), "back\\\\slash");
  EXPECT_EQ(Printable("\x7f"), "\\x7f");
}

TEST(PrintableTest, KeepsUtf8AndEscapesWhatIsNot) {
  EXPECT_EQ(Printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  // A bare 8-bit CSI, the same as a C1 control in UTF-8, a cut sequence,
  // an overlong '/', a surrogate.
  EXPECT_EQ(Printable("\x9b"), "\\x9b");
  EXPECT_EQ(Printable("\xc2\x9b"), "\\xc2\\x9b");
  EXPECT_EQ(Printable("\xe2\x82"), "\\xe2\\x82");
  EXPECT_EQ(Printable("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(Printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");
}

TEST(IsUtf8Test, WellFormedSequencesOnly) {
  EXPECT_TRUE(IsUtf8(""));
  EXPECT_TRUE(IsUtf8("caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80\n"));
  EXPECT_TRUE(IsUtf8("\xc2\x9b"));  // a C1 control is UTF-8
  EXPECT_FALSE(IsUtf8("\x9b"));
  EXPECT_FALSE(IsUtf8("\xe2\x82"));
  EXPECT_FALSE(IsUtf8("\xc0\xaf"));
  EXPECT_FALSE(IsUtf8("\xed\xa0\x80"));
  EXPECT_FALSE(IsUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

TEST(PrintLineTest, WritesOneFlushedLineWithItsPrefix) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  ASSERT_NE(out, nullptr);
  PrintLine(out, "verity sync: app", "fetched\n\x1b[2J");
  // Flushed: the stream's buffer holds the line before it is closed.
  EXPECT_EQ(std::string(buffer, size),
            "verity sync: app: fetched\\n\\x1b[2J\n");
  std::fclose(out);
  std::free(buffer);
}

TEST(Rfc3339Test, WholeSecondsInUtcThatParseBack) {
  const absl::Time time = absl::FromUnixMillis(1796381433250);
  EXPECT_EQ(Rfc3339(time), "2026-12-04T10:50:33Z");
  absl::Time parsed;
  std::string error;
  ASSERT_TRUE(
      absl::ParseTime(absl::RFC3339_sec, Rfc3339(time), &parsed, &error))
      << error;
  EXPECT_EQ(parsed, absl::FromUnixSeconds(1796381433));
}

}  // namespace
}  // namespace verity
