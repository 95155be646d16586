// SignedJournal: what is appended is loaded back; a line a crash cut short
// is skipped and ended by the next append; anything else is DATA_LOSS.

#include "client/sdk/signed_journal.h"

#include <sys/stat.h>

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/testing/name_statements.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/hash/hash.h"
#include "lib/testing/fsverity_cli.h"

namespace verity::client {
namespace {

class SignedJournalTest : public ::testing::Test {
 protected:
  NameStatement Statement(uint64_t version) {
    TestClaim claim;
    claim.name = "n";
    claim.digest = ParsedDigest{HashAlgorithm::kSha256, std::string(32, 'd')};
    claim.version = version;
    return ParseTestStatement(SignTestStatement(claim, {&key_}));
  }

  void Overwrite(const std::string& text) {
    ASSERT_TRUE(
        ReplaceFileDurably(journal_.path() + ".tmp", journal_.path(), text)
            .ok());
  }

  const Ed25519PrivateKey key_ = Ed25519PrivateKey::Generate();
  const std::string dir_ = FreshTestDir("signed_journal") + "/state";
  const SignedJournal journal_{dir_, "k1"};
};

TEST_F(SignedJournalTest, LoadsWhatWasAppended) {
  EXPECT_TRUE(journal_.Load()->empty());
  const NameStatement one = Statement(1);
  const NameStatement two = Statement(2);
  ASSERT_TRUE(journal_.Append(one).ok());
  ASSERT_TRUE(journal_.Append(two).ok());
  absl::StatusOr<absl::flat_hash_set<std::string>> loaded = journal_.Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, (absl::flat_hash_set<std::string>{Sha256Hex(one.body),
                                                       Sha256Hex(two.body)}));
}

TEST_F(SignedJournalTest, ALineCutShortIsSkippedAndEnded) {
  const NameStatement one = Statement(1);
  ASSERT_TRUE(journal_.Append(one).ok());
  Overwrite(Sha256Hex(one.body) + "\n" + Sha256Hex("x").substr(0, 20));
  EXPECT_EQ(journal_.Load()->size(), 1u);
  const NameStatement two = Statement(2);
  ASSERT_TRUE(journal_.Append(two).ok());
  absl::StatusOr<absl::flat_hash_set<std::string>> loaded = journal_.Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, (absl::flat_hash_set<std::string>{Sha256Hex(one.body),
                                                       Sha256Hex(two.body)}));
}

TEST_F(SignedJournalTest, ADamagedLineIsDataLoss) {
  ASSERT_TRUE(journal_.Append(Statement(1)).ok());
  for (const std::string& damaged :
       {std::string("not hex\n"), Sha256Hex("x") + "0\n",
        absl::AsciiStrToUpper(Sha256Hex("x")) + "\n"}) {
    Overwrite(damaged);
    EXPECT_TRUE(absl::IsDataLoss(journal_.Load().status())) << damaged;
  }
}

TEST_F(SignedJournalTest, AJournalOthersCanWriteIsRefused) {
  ASSERT_TRUE(journal_.Append(Statement(1)).ok());
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(journal_.Load().status()));
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  EXPECT_TRUE(journal_.Load().ok());
}

}  // namespace
}  // namespace verity::client
