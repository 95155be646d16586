// Name histories: they encode one way and decode back, a name file from
// before histories reads as one version, each write adds one version at the
// front and keeps the newest, and malformed files are DATA_LOSS.

#include "server/store/name_history.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/tree/descriptor.h"

namespace verity::server {
namespace {

ParsedDigest Digest(char fill) {
  return ParsedDigest{HashAlgorithm::kSha256, std::string(32, fill)};
}

NameVersion Version(char fill, int64_t seconds, std::string statement = "") {
  return NameVersion{Digest(fill), std::move(statement),
                     absl::FromUnixSeconds(seconds)};
}

std::vector<char> Fills(const NameHistory& history) {
  std::vector<char> fills;
  for (const NameVersion& version : history.versions) {
    fills.push_back(version.digest.digest[0]);
  }
  return fills;
}

TEST(NameHistoryTest, RoundTrips) {
  NameHistory history{"app/release",
                      {Version('c', 300, std::string("s\0\n3", 4)),
                       Version('b', 200), Version('a', 100, "s1")}};
  history.versions.push_back(
      NameVersion{Digest('z'), "", absl::InfinitePast()});
  const absl::StatusOr<NameHistory> decoded =
      DecodeNameHistory(EncodeNameHistory(history));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->name, "app/release");
  EXPECT_EQ(decoded->versions, history.versions);
}

TEST(NameHistoryTest, ANameFileFromBeforeIsOneVersionOfUnknownTime) {
  const absl::StatusOr<NameHistory> decoded = DecodeNameHistory(
      EncodeNameFile(Digest('a').ToString(), "old", "statement"));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->name, "old");
  ASSERT_EQ(decoded->versions.size(), 1u);
  EXPECT_EQ(decoded->versions[0],
            (NameVersion{Digest('a'), "statement", absl::InfinitePast()}));
}

TEST(NameHistoryTest, EachWriteAddsAVersionAtTheFrontAndKeepsTheNewest) {
  NameHistory history = NextNameHistory(nullptr, "n", Version('a', 1), 3);
  EXPECT_EQ(Fills(history), std::vector<char>{'a'});
  for (const char fill : {'b', 'c', 'd'}) {
    history = NextNameHistory(&history, "n", Version(fill, fill), 3);
  }
  EXPECT_EQ(Fills(history), (std::vector<char>{'d', 'c', 'b'}));
  // Back to an older release: a new version, as a re-signed one would be.
  history = NextNameHistory(&history, "n", Version('b', 500, "v9"), 3);
  EXPECT_EQ(Fills(history), (std::vector<char>{'b', 'd', 'c'}));
  // A smaller limit drops the oldest at the next write.
  history = NextNameHistory(&history, "n", Version('e', 600), 1);
  EXPECT_EQ(Fills(history), std::vector<char>{'e'});
}

TEST(NameHistoryTest, RewritingWhatTheNamePointsAtAddsNoVersion) {
  NameHistory history = NextNameHistory(nullptr, "n", Version('a', 1, "s"), 5);
  history = NextNameHistory(&history, "n", Version('a', 99, "s"), 5);
  ASSERT_EQ(history.versions.size(), 1u);
  EXPECT_EQ(history.versions[0].written, absl::FromUnixSeconds(1));
  // The same blob with a new statement is a new version.
  history = NextNameHistory(&history, "n", Version('a', 99, "s2"), 5);
  EXPECT_EQ(history.versions.size(), 2u);
}

TEST(NameHistoryTest, TheLargestHistoryFits) {
  NameHistory history{std::string(kMaxBlobNameSize, 'n'), {}};
  for (int i = 0; i < kMaxNameHistory; ++i) {
    history.versions.push_back(
        NameVersion{ParsedDigest{HashAlgorithm::kSha512, std::string(64, 'x')},
                    std::string(kMaxNameStatementSize, 's'),
                    absl::FromUnixSeconds(int64_t{1} << 40)});
  }
  const std::string encoded = EncodeNameHistory(history);
  EXPECT_LE(encoded.size(), kMaxNameHistoryFileSize);
  EXPECT_TRUE(DecodeNameHistory(encoded).ok());
}

TEST(NameHistoryTest, RefusesMalformedFiles) {
  const std::string magic = "verity-name-history 1\n";
  const std::string a = EncodeNameFile(Digest('a').ToString(), "a");
  const std::string b = EncodeNameFile(Digest('b').ToString(), "b");
  const std::string one = absl::StrCat("5 ", a.size(), "\n", a);
  std::string too_many = magic;
  for (int i = 0; i <= kMaxNameHistory; ++i) too_many += one;
  for (const std::string& contents : std::vector<std::string>{
           magic,                                                // no version
           magic + "5 " + std::to_string(a.size()) + "\n",       // cut short
           magic + one + "x",                                    // bytes after
           magic + "five " + one.substr(2),                      // bad time
           magic + "5 -1\n" + a,                                 // bad size
           magic + one + absl::StrCat("6 ", b.size(), "\n", b),  // two names
           magic + "5 3\nabc",  // a version that is no name file
           too_many,
       }) {
    EXPECT_EQ(DecodeNameHistory(contents).status().code(),
              absl::StatusCode::kDataLoss)
        << contents;
  }
}

}  // namespace
}  // namespace verity::server
