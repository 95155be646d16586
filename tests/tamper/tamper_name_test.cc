// TamperName and ParseTamper: every mode's name parses back to it, and
// malformed names are refused.

#include "gtest/gtest.h"
#include "tests/tamper/tamper.h"

namespace verity::tamper {
namespace {

constexpr char kDigest[] =
    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(TamperNameTest, RoundTrips) {
  for (std::string name : {"none",
                           "flip-data-bit",
                           "flip-tree-bit:0",
                           "flip-tree-bit:2",
                           "flip-descriptor:digest",
                           "flip-descriptor:hash-algorithm",
                           "flip-descriptor:log-block-size",
                           "flip-descriptor:salt",
                           "flip-descriptor:data-size",
                           "flip-descriptor:root-hash",
                           "swap-data-blocks",
                           "swap-chunks",
                           "drop-message",
                           "duplicate-message",
                           "truncate",
                           "truncate:0",
                           "truncate:3",
                           "lie-size-and-salt",
                           "blocks-beyond-range",
                           "extend-last-chunk",
                           "drop-tree-blocks",
                           "wrong-data-offset"}) {
    absl::StatusOr<Tamper> tamper = ParseTamper(name);
    ASSERT_TRUE(tamper.ok()) << tamper.status();
    EXPECT_EQ(TamperName(*tamper), name);
  }
  for (std::string kind : {"other-blob:", "other-blob-relabeled:"}) {
    absl::StatusOr<Tamper> tamper = ParseTamper(kind + kDigest);
    ASSERT_TRUE(tamper.ok()) << tamper.status();
    EXPECT_EQ(tamper->other_digest, kDigest);
    EXPECT_EQ(TamperName(*tamper), kind + kDigest);
  }
}

TEST(TamperNameTest, RefusesBadNames) {
  for (const char* name :
       {"", "flip", "flip-tree-bit", "flip-tree-bit:-1", "flip-tree-bit:x",
        "flip-descriptor", "flip-descriptor:size", "truncate:x", "truncate:-2",
        "other-blob", "other-blob:abc", "none:1", "swap-chunks:"}) {
    EXPECT_FALSE(ParseTamper(name).ok()) << name;
  }
}

}  // namespace
}  // namespace verity::tamper
