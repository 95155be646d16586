// Tests the small-blob record's footer: where each part is, and how a
// damaged footer and one a later version wrote are told apart.

#include "server/store/blob_record.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/bytes.h"
#include "lib/base/little_endian.h"
#include "lib/hash/hash.h"

namespace verity::server {
namespace {

const std::string kData(5000, 'd');

std::string Record(absl::string_view signature = "sig",
                   bool tree_manifest = true) {
  return absl::StrCat(
      kData,
      RecordTail(kData.size(), std::string(4096, 't'), std::string(8192, 'f'),
                 std::string(256, 'x'), signature, tree_manifest));
}

absl::string_view FooterOf(const std::string& record) {
  return absl::string_view(record).substr(record.size() - kRecordFooterSize);
}

TEST(BlobRecordTest, TheFooterSaysWhereEachPartIs) {
  const std::string record = Record();
  const absl::StatusOr<RecordFooter> footer =
      DecodeRecordFooter(FooterOf(record), record.size(), "sha256:x");
  ASSERT_TRUE(footer.ok()) << footer.status();
  EXPECT_TRUE(footer->tree_manifest);
  EXPECT_EQ(footer->PartOffset(BlobPart::kData), 0u);
  EXPECT_EQ(footer->PartOffset(BlobPart::kTree), 5000u);
  EXPECT_EQ(footer->PartOffset(BlobPart::kFec), 5000u + 4096);
  EXPECT_EQ(record.substr(footer->descriptor_offset(), 256),
            std::string(256, 'x'));
  EXPECT_EQ(record.substr(footer->signature_offset(), footer->signature_size),
            "sig");
  EXPECT_EQ(footer->record_size(), record.size());

  const std::string plain = Record("", false);
  const absl::StatusOr<RecordFooter> unmarked =
      DecodeRecordFooter(FooterOf(plain), plain.size(), "sha256:x");
  ASSERT_TRUE(unmarked.ok()) << unmarked.status();
  EXPECT_FALSE(unmarked->tree_manifest);
  EXPECT_EQ(unmarked->signature_size, 0u);
}

TEST(BlobRecordTest, EveryFlippedFooterByteIsDamage) {
  const std::string record = Record();
  for (size_t i = 0; i < kRecordFooterSize; ++i) {
    std::string footer(FooterOf(record));
    footer[i] ^= 0x10;
    const absl::Status status =
        DecodeRecordFooter(footer, record.size(), "sha256:x").status();
    EXPECT_TRUE(absl::IsDataLoss(status)) << "byte " << i << ": " << status;
  }
}

TEST(BlobRecordTest, SizesThatDoNotAddUpAreDamage) {
  const std::string record = Record();
  for (const uint64_t size : {record.size() - 1, record.size() + 1,
                              uint64_t{kRecordFooterSize} - 1}) {
    const absl::Status status =
        DecodeRecordFooter(FooterOf(record), size, "sha256:x").status();
    EXPECT_TRUE(absl::IsDataLoss(status)) << size << ": " << status;
  }
  EXPECT_TRUE(absl::IsDataLoss(
      DecodeRecordFooter("short", record.size(), "sha256:x").status()));
}

TEST(BlobRecordTest, ALaterVersionIsNotDamage) {
  const std::string record = Record();
  std::string footer(FooterOf(record));
  StoreLittleEndian(kRecordVersion + 1, 4,
                    reinterpret_cast<uint8_t*>(footer.data()) + 8);
  // A valid check over the new version: written so, not damaged.
  const std::string check =
      ComputeHash(HashAlgorithm::kSha256,
                  AsBytes(absl::string_view(footer).substr(0, 56)))
          .substr(0, 8);
  footer.replace(56, 8, check);
  const absl::Status status =
      DecodeRecordFooter(footer, record.size(), "sha256:x").status();
  EXPECT_TRUE(absl::IsUnimplemented(status)) << status;
  EXPECT_NE(status.message().find("version 2"), std::string::npos) << status;
}

}  // namespace
}  // namespace verity::server
