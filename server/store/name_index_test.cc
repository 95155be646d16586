// Tests name validation, the name file format and NameIndex.

#include "server/store/name_index.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"

namespace verity::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ValidateBlobNameTest, AcceptsRelativePaths) {
  for (const std::string& name : std::vector<std::string>{
           "a", "a/b/c.txt", ".hidden", "a/..b/c..", "dir/.x", "sp ace",
           std::string(kMaxBlobNameSize, 'n')}) {
    EXPECT_TRUE(ValidateBlobName(name).ok()) << name;
  }
}

TEST(ValidateBlobNameTest, RejectsOthers) {
  for (const std::string& name : std::vector<std::string>{
           std::string(), std::string(kMaxBlobNameSize + 1, 'n'), "/abs",
           "a//b", "a/", ".", "..", "a/./b", "a/../b", "../a", "./a",
           std::string("a\0b", 3)}) {
    EXPECT_EQ(ValidateBlobName(name).code(), absl::StatusCode::kInvalidArgument)
        << name;
  }
}

TEST(NameFileTest, FileNameIsTheSha256HexOfTheName) {
  EXPECT_EQ(NameFileName("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(NameFileTest, RoundTrips) {
  const std::string digest =
      FormatDigest(HashAlgorithm::kSha512, AsBytes(std::string(64, '\x01')));
  const absl::StatusOr<NameRecord> record =
      DecodeNameFile(EncodeNameFile(digest, "dir/with\nnewline"));
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->digest.algorithm, HashAlgorithm::kSha512);
  EXPECT_EQ(record->digest.digest, std::string(64, '\x01'));
  EXPECT_EQ(record->name, "dir/with\nnewline");
}

TEST(NameFileTest, MalformedIsDataLoss) {
  const std::string digest =
      FormatDigest(HashAlgorithm::kSha256, AsBytes(std::string(32, 'x')));
  for (const std::string& contents :
       std::vector<std::string>{std::string(), digest, "sha256:00\nname",
                                digest + "\n", digest + "\n/abs"}) {
    EXPECT_EQ(DecodeNameFile(contents).status().code(),
              absl::StatusCode::kDataLoss)
        << contents;
  }
}

TEST(NameFileTest, RoundTripsAStatementOfAnyBytes) {
  const std::string digest =
      FormatDigest(HashAlgorithm::kSha256, AsBytes(std::string(32, '\x02')));
  const std::string statement("sig\0with\nnul\0and\nnewlines\xff", 27);
  const std::string file = EncodeNameFile(digest, "a/b", statement);
  const absl::StatusOr<NameRecord> record = DecodeNameFile(file);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->digest.digest, std::string(32, '\x02'));
  EXPECT_EQ(record->name, "a/b");
  EXPECT_EQ(record->statement, statement);
  EXPECT_LE(EncodeNameFile(digest, std::string(kMaxBlobNameSize, 'n'),
                           std::string(kMaxNameStatementSize, 's'))
                .size(),
            kMaxNameFileSize);
}

TEST(NameFileTest, RoundTripsAStatementsLogIndex) {
  const std::string digest =
      FormatDigest(HashAlgorithm::kSha256, AsBytes(std::string(32, '\x04')));
  const std::string statement("verityd name statement v2\n\0sig", 30);
  for (const uint64_t index : {uint64_t{0}, uint64_t{7}, ~uint64_t{0}}) {
    const std::string file = EncodeNameFile(digest, "n", statement, index);
    const absl::StatusOr<NameRecord> record = DecodeNameFile(file);
    ASSERT_TRUE(record.ok()) << record.status();
    EXPECT_EQ(record->statement, statement);
    EXPECT_EQ(record->log_index, index);
  }
  // Without one, the file is what it was before logs (and reads as none).
  EXPECT_EQ(EncodeNameFile(digest, "n", statement, std::nullopt),
            EncodeNameFile(digest, "n", statement));
  EXPECT_EQ(DecodeNameFile(EncodeNameFile(digest, "n", statement))->log_index,
            std::nullopt);
  EXPECT_LE(
      EncodeNameFile(digest, std::string(kMaxBlobNameSize, 'n'),
                     std::string(kMaxNameStatementSize, 's'), ~uint64_t{0})
          .size(),
      kMaxNameFileSize);
  const std::string nul("\0", 1);
  for (const std::string& bad :
       {"log-index \nstatement", "log-index x1\nstatement",
        "log-index 99999999999999999999999\nstatement", "log-index 5",
        "log-index 5\n"}) {
    EXPECT_EQ(DecodeNameFile(digest + "\nn" + nul + bad).status().code(),
              absl::StatusCode::kDataLoss)
        << bad;
  }
}

TEST(NameFileTest, AFileWithoutAStatementReadsAsBefore) {
  // Exactly what verityd wrote before names had statements.
  const std::string digest =
      FormatDigest(HashAlgorithm::kSha256, AsBytes(std::string(32, '\x03')));
  EXPECT_EQ(EncodeNameFile(digest, "old/name"), digest + "\nold/name");
  const absl::StatusOr<NameRecord> record =
      DecodeNameFile(digest + "\nold/name");
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->name, "old/name");
  EXPECT_EQ(record->statement, "");
}

TEST(NameFileTest, ADamagedStatementIsDataLoss) {
  const std::string digest =
      FormatDigest(HashAlgorithm::kSha256, AsBytes(std::string(32, 'x')));
  const std::string nul("\0", 1);
  for (const std::string& contents : std::vector<std::string>{
           digest + "\nname" + nul,  // a NUL and no statement
           digest + "\nname" + nul +
               std::string(kMaxNameStatementSize + 1, 's'),
           digest + "\n" + nul + "statement"}) {  // no name
    EXPECT_EQ(DecodeNameFile(contents).status().code(),
              absl::StatusCode::kDataLoss)
        << contents;
  }
}

TEST(NameIndexTest, KeepsEachNamesStatement) {
  NameIndex index;
  index.Set("a", "d1", "statement 1");
  index.Set("b", "d1");
  ASSERT_NE(index.StatementOf("a"), nullptr);
  EXPECT_EQ(*index.StatementOf("a"), "statement 1");
  EXPECT_EQ(*index.StatementOf("b"), "");
  EXPECT_EQ(index.StatementOf("c"), nullptr);

  index.Set("a", "d2", "statement 2");  // re-pointed: replaced
  EXPECT_EQ(*index.StatementOf("a"), "statement 2");
  index.Set("a", "d2");  // re-pointed without one: none
  EXPECT_EQ(*index.StatementOf("a"), "");
  index.Set("a", "d2", "statement 3");
  EXPECT_TRUE(index.Remove("a"));
  EXPECT_EQ(index.StatementOf("a"), nullptr);
  index.Set("b", "d1", "statement 4");
  EXPECT_THAT(index.RemoveAllOf("d1"), ElementsAre("b"));
  EXPECT_EQ(index.StatementOf("b"), nullptr);
}

TEST(NameIndexTest, TracksNamesBothWays) {
  NameIndex index;
  index.Set("b", "d1");
  index.Set("a", "d1");
  index.Set("c", "d2");
  EXPECT_THAT(index.NamesOf("d1"), ElementsAre("a", "b"));
  ASSERT_NE(index.Find("c"), nullptr);
  EXPECT_EQ(*index.Find("c"), "d2");

  index.Set("a", "d2");  // moves the name
  EXPECT_THAT(index.NamesOf("d1"), ElementsAre("b"));
  EXPECT_THAT(index.NamesOf("d2"), ElementsAre("a", "c"));

  EXPECT_TRUE(index.Remove("b"));
  EXPECT_FALSE(index.Remove("b"));
  EXPECT_THAT(index.NamesOf("d1"), IsEmpty());
  EXPECT_EQ(index.Find("b"), nullptr);

  EXPECT_THAT(index.RemoveAllOf("d2"), ElementsAre("a", "c"));
  EXPECT_EQ(index.Find("a"), nullptr);
  EXPECT_THAT(index.NamesOf("d2"), IsEmpty());
  EXPECT_THAT(index.RemoveAllOf("d2"), IsEmpty());
}

}  // namespace
}  // namespace verity::server
