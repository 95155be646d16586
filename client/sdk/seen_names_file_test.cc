// The seen-names text: round trips, and every kind of damage is DATA_LOSS,
// never an empty or smaller record.

#include "client/sdk/seen_names_file.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"

namespace verity::client {
namespace {

const std::string kRoot(64, 'a');
const std::string kHash(64, 'b');

SeenNames Sample() {
  SeenNames seen;
  seen.key_id = kRoot;
  seen.names["models/latest"] = {7, kHash};
  seen.names["a name with spaces\nand a newline\\"] = {1, std::string(64, 'c')};
  seen.names["\xff\x01"] = {UINT64_MAX, kHash};
  return seen;
}

TEST(SeenNamesFileTest, RoundTrips) {
  const absl::StatusOr<std::string> text = FormatSeenNames(Sample());
  ASSERT_TRUE(text.ok()) << text.status();
  const absl::StatusOr<SeenNames> parsed = ParseSeenNames(*text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->key_id, kRoot);
  ASSERT_EQ(parsed->names.size(), 3u);
  for (const auto& [name, entry] : Sample().names) {
    ASSERT_EQ(parsed->names.count(name), 1u) << name;
    EXPECT_EQ(parsed->names.at(name).version, entry.version);
    EXPECT_EQ(parsed->names.at(name).body_sha256, entry.body_sha256);
  }
  SeenNames empty{kRoot, {}};
  EXPECT_TRUE(ParseSeenNames(*FormatSeenNames(empty))->names.empty());
}

TEST(SeenNamesFileTest, EveryFlippedOrMissingByteIsDamage) {
  const std::string text = *FormatSeenNames(Sample());
  for (size_t i = 0; i < text.size(); ++i) {
    std::string flipped = text;
    flipped[i] ^= 0x01;
    EXPECT_EQ(ParseSeenNames(flipped).status().code(),
              absl::StatusCode::kDataLoss)
        << "byte " << i;
    EXPECT_EQ(ParseSeenNames(text.substr(0, i)).status().code(),
              absl::StatusCode::kDataLoss)
        << "truncated to " << i;
  }
  EXPECT_EQ(ParseSeenNames(text + "x").status().code(),
            absl::StatusCode::kDataLoss);
}

// `body` with the checksum line the format asks for, so that only the body
// can be wrong.
std::string WithChecksum(const std::string& body) {
  return absl::StrCat(body, "sha256 ",
                      absl::BytesToHexString(
                          ComputeHash(HashAlgorithm::kSha256, AsBytes(body))),
                      "\n");
}

TEST(SeenNamesFileTest, ChecksummedNonsenseIsDamage) {
  const std::string header =
      absl::StrCat("verity seen names v1\nkey ", kRoot, "\n");
  // The checksum rule itself: a good body with it parses.
  const std::string good = absl::StrCat(header, "1 ", kHash, " n\n");
  ASSERT_TRUE(ParseSeenNames(WithChecksum(good)).ok());
  for (const std::string& bad :
       {absl::StrCat(header, "07 ", kHash, " n\n"),
        absl::StrCat(header, "-1 ", kHash, " n\n"),
        absl::StrCat(header, "18446744073709551616 ", kHash, " n\n"),
        absl::StrCat(header, "1 ", kHash.substr(1), " n\n"),
        absl::StrCat(header, "1 ", std::string(64, 'B'), " n\n"),
        absl::StrCat(header, "1 ", kHash, " \n"),
        absl::StrCat(header, "1 ", kHash, " \\q\n"),
        absl::StrCat(header, "1 ", kHash, " \\x41\n"),  // not canonical
        absl::StrCat(header, "1 ", kHash, "\n"),
        absl::StrCat(header, "1 ", kHash, " b\n1 ", kHash, " a\n"),
        absl::StrCat(header, "1 ", kHash, " a\n2 ", kHash, " a\n"),
        absl::StrCat("verity seen names v2\nkey ", kRoot, "\n"),
        absl::StrCat("verity seen names v1\nkey ", "\n"),
        absl::StrCat("verity seen names v1\nkey X", kRoot, "\n"),
        std::string("verity seen names v1\n"), std::string()}) {
    EXPECT_EQ(ParseSeenNames(WithChecksum(bad)).status().code(),
              absl::StatusCode::kDataLoss)
        << bad;
  }
}

TEST(SeenNamesFileTest, Bounded) {
  SeenNames many{kRoot, {}};
  for (size_t i = 0; i <= kMaxSeenNames; ++i) {
    many.names[absl::StrCat("n", i)] = {1, kHash};
  }
  EXPECT_EQ(FormatSeenNames(many).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace verity::client
