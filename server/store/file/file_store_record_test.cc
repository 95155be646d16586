// The file store's small blobs, each one record file (server/store/
// blob_record.h): stored and served as a directory is, with each part's
// damage found where a directory's is (at Open, or by the verified read),
// repaired in place by FEC, rewritten whole for a new signature or mark, and
// a record a later verityd wrote left alone. The crash and fault matrices run
// over records too (file_store_fault_test, file_store_fault_delete_test).

#include <sys/stat.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/little_endian.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "server/store/blob_record.h"
#include "server/store/fec_repair.h"
#include "server/store/file/file_store.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

using ::testing::IsEmpty;

constexpr uint32_t kBlock = 4096;

class FileStoreRecordTest : public FileStoreFixture {
 protected:
  // Puts `data` saying its size, with `commit`; its digest text.
  std::string PutRecord(const std::string& data, PutCommit commit = {}) {
    absl::StatusOr<std::unique_ptr<PutWriter>> writer =
        store_->BeginPut(MerkleParams{}, std::nullopt, data.size());
    EXPECT_TRUE(writer.ok()) << writer.status();
    if (!writer.ok()) return "";
    EXPECT_TRUE((*writer)->Append(AsBytes(data)).ok());
    absl::StatusOr<PutResult> put = (*writer)->Commit(commit);
    EXPECT_TRUE(put.ok()) << put.status();
    return put.ok() ? put->info.digest : "";
  }

  std::string PathOf(const std::string& digest_text) {
    return BlobDirFor(root_, digest_text);
  }

  bool IsRecordFile(const std::string& digest_text) {
    struct stat st;
    return stat(PathOf(digest_text).c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }

  RecordFooter FooterOf(const std::string& digest_text) {
    const std::string record = *ReadWholeFile(PathOf(digest_text));
    absl::StatusOr<RecordFooter> footer = DecodeRecordFooter(
        absl::string_view(record).substr(record.size() - kRecordFooterSize),
        record.size(), digest_text);
    EXPECT_TRUE(footer.ok()) << footer.status();
    return footer.ok() ? *footer : RecordFooter{};
  }

  // Flips a bit of byte `offset` of the record file.
  void FlipRecordByte(const std::string& digest_text, uint64_t offset) {
    std::string record = *ReadWholeFile(PathOf(digest_text));
    ASSERT_LT(offset, record.size());
    record[offset] ^= 0x04;
    ASSERT_TRUE(WriteWholeFile(PathOf(digest_text), record).ok());
  }

  // The whole blob read verified (FEC repairs on): what a client gets.
  absl::StatusOr<std::string> ReadVerifiedAll(const std::string& digest_text,
                                              int* repaired = nullptr) {
    ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob,
                     store_->OpenBlob(DigestFromText(digest_text)));
    ASSIGN_OR_RETURN(std::shared_ptr<VerifiedBlob> verified,
                     VerifiedBlob::Create(blob));
    const uint64_t blocks = verified->geometry().data_block_count();
    std::string out;
    for (int attempt = 0; attempt < 8; ++attempt) {
      const absl::Status status = ReadVerified(*verified, 0, blocks, &out);
      if (status.ok() || blob->fec_roots() == 0) {
        RETURN_IF_ERROR(status);
        return out;
      }
      const std::optional<uint64_t> bad = BadBlockOf(status);
      if (!bad.has_value()) return status;
      ASSIGN_OR_RETURN(const int rebuilt, RepairFecGroup(*verified, *bad));
      if (repaired != nullptr) *repaired += rebuilt;
    }
    return absl::InternalError("no progress");
  }
};

TEST_F(FileStoreRecordTest, ASmallBlobIsOneFileServedAsADirectoryIs) {
  const std::string data = MakeData(16384, 1);
  const std::string text = PutRecord(data);
  EXPECT_TRUE(IsRecordFile(text));
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
  EXPECT_EQ(*ReadVerifiedAll(text), data);
  EXPECT_EQ(store_->Stat(DigestFromText(text))->descriptor.data_size, 16384u);

  Reopen();
  EXPECT_EQ(*ReadVerifiedAll(text), data);
  EXPECT_THAT(log_.lines(), IsEmpty());

  // Above the limit, or with no size said: a directory.
  record_max_bytes_ = 8192;
  Reopen();
  EXPECT_FALSE(IsRecordFile(PutRecord(MakeData(8193, 2))));
  EXPECT_FALSE(IsRecordFile(MustPut(MakeData(100, 3))));
  EXPECT_TRUE(IsRecordFile(PutRecord(MakeData(8192, 4))));
}

TEST_F(FileStoreRecordTest,
       ADamagedFooterOrDescriptorOrATornRecordIsQuarantined) {
  const std::string data = MakeData(20000, 5);
  const auto expect_quarantined_after = [&](auto damage, const char* what) {
    SCOPED_TRACE(what);
    const std::string text = PutRecord(data);
    damage(text);
    Reopen();
    EXPECT_TRUE(
        absl::IsDataLoss(store_->OpenBlob(DigestFromText(text)).status()));
    EXPECT_TRUE(log_.Contains("quarantined " + text));
    // A Put of the content serves it again.
    EXPECT_EQ(PutRecord(data), text);
    EXPECT_EQ(*ReadVerifiedAll(text), data);
  };
  expect_quarantined_after(
      [&](const std::string& text) {
        FlipRecordByte(text, FooterOf(text).record_size() - 20);
      },
      "footer");
  expect_quarantined_after(
      [&](const std::string& text) {
        FlipRecordByte(text, FooterOf(text).descriptor_offset() + 40);
      },
      "descriptor");
  expect_quarantined_after(
      [&](const std::string& text) {
        ASSERT_EQ(truncate(PathOf(text).c_str(), 12000), 0);
      },
      "torn");
}

TEST_F(FileStoreRecordTest, DamagedDataOrTreeFailsTheVerifiedRead) {
  const std::string data = MakeData(20000, 6);
  const std::string text = PutRecord(data);
  FlipRecordByte(text, 4100);
  EXPECT_TRUE(absl::IsDataLoss(ReadVerifiedAll(text).status()));

  const std::string other = PutRecord(MakeData(20000, 7));
  FlipRecordByte(other, FooterOf(other).PartOffset(BlobPart::kTree) + 3);
  EXPECT_TRUE(absl::IsDataLoss(ReadVerifiedAll(other).status()));
}

TEST_F(FileStoreRecordTest, FecRepairsARecordInPlace) {
  fec_roots_ = 2;
  Reopen();
  const std::string data = MakeData(40 * kBlock + 100, 8);
  const std::string text = PutRecord(data);
  const RecordFooter footer = FooterOf(text);
  EXPECT_GT(footer.fec_size, 0u);
  const std::string pristine = *ReadWholeFile(PathOf(text));
  // A data block, then the tree's one block (with a bad tree block, no data
  // block can be checked, and the two are not repaired together).
  for (const uint64_t at :
       {uint64_t{7} * kBlock + 5, footer.PartOffset(BlobPart::kTree) + 9}) {
    FlipRecordByte(text, at);
    int repaired = 0;
    EXPECT_EQ(*ReadVerifiedAll(text, &repaired), data);
    EXPECT_EQ(repaired, 1);
    // Written back where it is in the record.
    EXPECT_TRUE(*ReadWholeFile(PathOf(text)) == pristine);
  }
}

TEST_F(FileStoreRecordTest, ASignatureOrTheManifestMarkRewritesTheRecord) {
  const std::string data = MakeData(9000, 9);
  const std::string text = PutRecord(data);
  EXPECT_EQ(FooterOf(text).signature_size, 0u);

  PutCommit signed_commit;
  signed_commit.fsverity_signature = "a signature";
  EXPECT_EQ(PutRecord(data, signed_commit), text);
  EXPECT_EQ(FooterOf(text).signature_size, 11u);
  PutCommit marked;
  marked.tree_manifest = true;
  EXPECT_EQ(PutRecord(data, marked), text);
  EXPECT_TRUE(FooterOf(text).tree_manifest);
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());

  Reopen();
  absl::StatusOr<BlobInfo> info = store_->Stat(DigestFromText(text));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->fsverity_signature, "a signature");
  EXPECT_TRUE(info->tree_manifest);
  EXPECT_EQ(*ReadVerifiedAll(text), data);
}

TEST_F(FileStoreRecordTest, TimesDeletesAndQuarantinesWorkOnTheFile) {
  const std::string text = PutRecord(MakeData(5000, 10));
  const ParsedDigest digest = DigestFromText(text);
  const absl::Time later =
      absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now() + absl::Hours(3)));
  ASSERT_TRUE(store_->MarkUsed(digest, later, absl::ZeroDuration()).ok());
  Reopen();
  EXPECT_EQ(*store_->LastUsed(digest), later);

  ASSERT_TRUE(store_->Quarantine(digest, "test").ok());
  EXPECT_GT(store_->LastUsed(digest).value(), absl::Now() - absl::Minutes(1));
  ASSERT_TRUE(store_->DeleteBlob(digest).ok());
  EXPECT_THAT(EntriesOf(root_ + "/quarantine"), IsEmpty());
  EXPECT_TRUE(absl::IsNotFound(store_->Stat(digest).status()));
}

TEST_F(FileStoreRecordTest, ARecordALaterVerityWroteIsLeftAlone) {
  const std::string data = MakeData(6000, 11);
  const std::string text = PutRecord(data);
  std::string record = *ReadWholeFile(PathOf(text));
  const size_t at = record.size() - kRecordFooterSize;
  StoreLittleEndian(kRecordVersion + 1, 4,
                    reinterpret_cast<uint8_t*>(record.data()) + at + 8);
  record.replace(at + 56, 8,
                 ComputeHash(HashAlgorithm::kSha256,
                             AsBytes(absl::string_view(record).substr(at, 56)))
                     .substr(0, 8));
  ASSERT_TRUE(WriteWholeFile(PathOf(text), record).ok());
  Reopen();
  EXPECT_TRUE(absl::IsNotFound(store_->Stat(DigestFromText(text)).status()));
  EXPECT_TRUE(log_.Contains("which a later verityd wrote"));
  EXPECT_TRUE(*ReadWholeFile(PathOf(text)) == record);  // not quarantined
  EXPECT_THAT(EntriesOf(root_ + "/quarantine"), IsEmpty());
  // A Put of the content stores it in this version's record.
  EXPECT_EQ(PutRecord(data), text);
  EXPECT_EQ(*ReadVerifiedAll(text), data);
}

TEST_F(FileStoreRecordTest, AVersion1StoreIsReadAndSaysVersion2) {
  record_max_bytes_ = 0;
  Reopen();
  const std::string data = MakeData(7000, 12);
  const std::string text = PutRecord(data);
  EXPECT_FALSE(IsRecordFile(text));
  store_.reset();
  ASSERT_TRUE(WriteWholeFile(root_ + "/VERSION", "verityd-store 1\n").ok());
  record_max_bytes_ = kMaxRecordDataBytes;
  Reopen();
  EXPECT_EQ(*ReadWholeFile(root_ + "/VERSION"), "verityd-store 2\n");
  EXPECT_EQ(*ReadVerifiedAll(text), data);
  EXPECT_TRUE(IsRecordFile(PutRecord(MakeData(7000, 13))));
}

}  // namespace
}  // namespace verity::server
