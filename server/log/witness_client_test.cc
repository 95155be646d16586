// The --witnesses file: witnesses' cosignature keys and URLs, and what is
// refused (a log's key, a non-HTTP URL, a witness listed twice, a bad line).

#include "server/log/witness_client.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace verity::server {
namespace {

std::string KeyOf(absl::string_view name, tlog::NoteKeyType type, char seed) {
  return tlog::NoteKey::Make(
             name, type,
             Ed25519PrivateKey::FromSeed(std::string(32, seed))->public_key())
      ->ToString();
}

TEST(WitnessesTest, ParsesKeysAndUrls) {
  const std::string a =
      KeyOf("a.example", tlog::NoteKeyType::kCosignatureV1, 'a');
  const std::string b =
      KeyOf("b.example", tlog::NoteKeyType::kCosignatureV1, 'b');
  absl::StatusOr<std::vector<WitnessConfig>> witnesses = ParseWitnesses(
      absl::StrCat("# the pod's witness\n", a, " http://127.0.0.1:7380/\n\n  ",
                   b, "   https://witness.example/w  \n"));
  ASSERT_TRUE(witnesses.ok()) << witnesses.status();
  ASSERT_EQ(witnesses->size(), 2u);
  EXPECT_EQ((*witnesses)[0].key.ToString(), a);
  EXPECT_EQ((*witnesses)[0].url, "http://127.0.0.1:7380");
  EXPECT_EQ((*witnesses)[1].key.name(), "b.example");
  EXPECT_EQ((*witnesses)[1].url, "https://witness.example/w");
  EXPECT_TRUE(ParseWitnesses("# none\n")->empty());
}

TEST(WitnessesTest, RefusesWhatIsNotAWitness) {
  const std::string a =
      KeyOf("a.example", tlog::NoteKeyType::kCosignatureV1, 'a');
  const std::string log =
      KeyOf("log.example", tlog::NoteKeyType::kEd25519, 'l');
  for (const std::string& text :
       {absl::StrCat(log, " http://x\n"), absl::StrCat(a, " ftp://x\n"),
        absl::StrCat(a, "\n"), absl::StrCat(a, " http://x extra\n"),
        std::string("not+a+key http://x\n"),
        absl::StrCat(a, " http://x\n", a, " http://y\n")}) {
    absl::Status status = ParseWitnesses(text).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << text;
    EXPECT_NE(status.message().find("line "), std::string::npos) << status;
  }
}

}  // namespace
}  // namespace verity::server
