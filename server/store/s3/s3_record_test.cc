// Small blobs in the S3 store, over FakeS3: a sized Put of at most
// record_max_bytes is one object, its record (blob_record.h) at the
// descriptor's key, written with one PUT and read with one GET; every
// guarantee of a blob of objects holds for it: verified reads, a flipped bit
// in any part or a torn record found, quarantine and a Put that replaces it,
// FEC repair with the damage mark, signatures and the tree-manifest mark
// (the record written again), a record of a later version left alone,
// listing, deletion, and PutBatch's Puts in flight together.

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/base/buffer_pool.h"
#include "lib/base/status_macros.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/merkle_builder.h"
#include "server/store/blob_record.h"
#include "server/store/fec_repair.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/s3/s3_store.h"
#include "server/store/s3/testing/fake_s3.h"
#include "server/store/s3/testing/fake_s3_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

constexpr uint64_t kBlock = 4096;

ParsedDigest DigestOf(absl::string_view data) {
  MerkleBuilder builder{MerkleParams{}};
  EXPECT_TRUE(builder.Update(AsBytes(data)).ok());
  const MerkleTree tree = builder.Finish().value();
  return ParsedDigest{tree.descriptor.hash_algorithm, tree.digest};
}

class S3RecordTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenStore(0); }

  void OpenStore(int fec_roots) {
    store_.reset();
    S3StoreOptions options = FakeS3StoreOptions(counting_);
    options.fec_roots = fec_roots;
    absl::StatusOr<std::unique_ptr<S3Store>> store = S3Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    absl::StatusOr<std::unique_ptr<S3Client>> client =
        S3Client::WithTransport(options.client, s3_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  absl::StatusOr<PutResult> Put(absl::string_view data, bool sized = true,
                                const std::string& signature = "",
                                bool tree_manifest = false) {
    absl::StatusOr<std::unique_ptr<PutWriter>> writer = store_->BeginPut(
        MerkleParams{}, std::nullopt,
        sized ? std::optional<uint64_t>(data.size()) : std::nullopt);
    if (!writer.ok()) return writer.status();
    if (absl::Status s = (*writer)->Append(AsBytes(data)); !s.ok()) return s;
    PutCommit commit;
    commit.fsverity_signature = signature;
    commit.tree_manifest = tree_manifest;
    return (*writer)->Commit(commit);
  }

  std::string DescriptorKey(absl::string_view data) const {
    return layout_.BlobKey(DigestOf(data), BlobObject::kDescriptor);
  }
  // The keys under the blob's prefix.
  std::vector<std::string> KeysOf(absl::string_view data) const {
    return s3_->Keys(layout_.BlobPrefix(DigestOf(data)));
  }

  // The object `key` as the bucket holds it; nullopt if there is none.
  std::optional<std::string> Object(const std::string& key) {
    absl::StatusOr<std::string> object = ReadObject(*client_, key);
    if (absl::IsNotFound(object.status())) return std::nullopt;
    EXPECT_TRUE(object.ok()) << object.status();
    return object.value_or("");
  }
  // Writes `body` over `key`, as anyone with the bucket's credentials could.
  void SetObject(const std::string& key, std::string body) {
    ASSERT_TRUE(WriteObject(*client_, key, std::move(body)).ok());
  }
  // Flips one bit of the record of `data` at `offset` (from its end if
  // negative).
  void FlipRecordBit(absl::string_view data, int64_t offset) {
    std::string record = *Object(DescriptorKey(data));
    record[offset >= 0 ? offset : record.size() + offset] ^= 0x10;
    SetObject(DescriptorKey(data), record);
  }

  // The whole blob read and verified, or why not.
  absl::StatusOr<std::string> ReadAll(absl::string_view data) {
    ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob,
                     store_->OpenBlob(DigestOf(data)));
    ASSIGN_OR_RETURN(std::shared_ptr<VerifiedBlob> verified,
                     VerifiedBlob::Create(blob));
    std::string read;
    const uint64_t blocks = (data.size() + kBlock - 1) / kBlock;
    RETURN_IF_ERROR(ReadVerified(*verified, 0, blocks, &read));
    return read;
  }

  int Ops(const std::string& op) {
    absl::MutexLock lock(&counting_->mu);
    return counting_->ops[op];
  }
  void ResetOps() {
    absl::MutexLock lock(&counting_->mu);
    counting_->ops.clear();
  }

  const S3Layout layout_{"p/"};
  std::shared_ptr<FakeS3> s3_ = std::make_shared<FakeS3>();
  std::shared_ptr<CountingTransport> counting_ =
      std::make_shared<CountingTransport>(s3_);
  std::unique_ptr<S3Client> client_;
  std::unique_ptr<S3Store> store_;
};

TEST_F(S3RecordTest, ASmallBlobIsOneObjectWrittenOnceAndReadOnce) {
  const std::string data = MakeData(16384, 1);
  ResetOps();
  absl::StatusOr<PutResult> put = Put(data);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_FALSE(put->already_present);
  EXPECT_EQ(put->info.descriptor.data_size, data.size());
  // The record, and no claim against a collection (used/): new content.
  EXPECT_EQ(Ops("PutObject"), 1);
  EXPECT_EQ(Ops("SwapUsed"), 0);
  EXPECT_EQ(KeysOf(data), std::vector<std::string>{DescriptorKey(data)});
  const std::string record = *Object(DescriptorKey(data));
  EXPECT_EQ(record.substr(0, data.size()), data);
  EXPECT_TRUE(DecodeRecord(record, "").ok());

  OpenStore(0);  // a replica that never saw the Put
  ResetOps();
  absl::StatusOr<std::string> read = ReadAll(data);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(*read == data);
  EXPECT_EQ(Ops("GetDescriptor"), 1);
  EXPECT_EQ(Ops("GetData") + Ops("GetTree") + Ops("GetSignature"), 0);
  // Stored: a second Put writes nothing.
  ResetOps();
  put = Put(data);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_TRUE(put->already_present);
  EXPECT_EQ(Ops("PutObject"), 0);
}

// Records smaller than a dm-verity descriptor can be: told apart by their
// footer's magic.
TEST_F(S3RecordTest, TinyBlobsAreRecordsToo) {
  for (const std::string& data :
       {std::string(), std::string("x"), MakeData(200, 10)}) {
    SCOPED_TRACE(data.size());
    ASSERT_TRUE(Put(data).ok());
    EXPECT_EQ(KeysOf(data), std::vector<std::string>{DescriptorKey(data)});
    EXPECT_LT(Object(DescriptorKey(data))->size(), kMaxDescriptorSize);
    OpenStore(0);
    absl::StatusOr<std::shared_ptr<const Blob>> blob =
        store_->OpenBlob(DigestOf(data));
    ASSERT_TRUE(blob.ok()) << blob.status();
    EXPECT_EQ((*blob)->descriptor().data_size, data.size());
    if (!data.empty()) EXPECT_TRUE(*ReadAll(data) == data);
  }
}

TEST_F(S3RecordTest, LargerBlobsAndPutsWithoutASizeAreObjectsOfTheirParts) {
  const std::string large = MakeData(kMaxRecordDataBytes + 1, 2);
  const std::string unsized = MakeData(5000, 3);
  ASSERT_TRUE(Put(large).ok());
  ASSERT_TRUE(Put(unsized, false).ok());
  for (const std::string* data : {&large, &unsized}) {
    EXPECT_EQ(Object(DescriptorKey(*data))->size(), kDescriptorSize);
    EXPECT_TRUE(Object(layout_.BlobKey(DigestOf(*data), BlobObject::kData))
                    .has_value());
    EXPECT_TRUE(*ReadAll(*data) == *data);
  }
}

TEST_F(S3RecordTest, AFlippedBitInAnyPartIsFound) {
  const std::string data = MakeData(5 * kBlock + 100, 4);
  // Offsets from the start: data, tree; from the end: footer, descriptor.
  const int64_t tree_at = static_cast<int64_t>(data.size()) + 10;
  for (const int64_t at : {int64_t{7}, tree_at, int64_t{-1}, int64_t{-30},
                           -int64_t{kRecordFooterSize} - 100}) {
    SCOPED_TRACE(at);
    ASSERT_TRUE(Put(data).ok());
    FlipRecordBit(data, at);
    OpenStore(0);
    const absl::StatusOr<std::string> read = ReadAll(data);
    EXPECT_TRUE(absl::IsDataLoss(read.status())) << read.status();
    // Quarantined, then replaced by a Put of the content.
    ASSERT_TRUE(store_->Quarantine(DigestOf(data), "test").ok());
    absl::StatusOr<PutResult> put = Put(data);
    ASSERT_TRUE(put.ok()) << put.status();
    EXPECT_FALSE(put->already_present);
    ASSERT_TRUE(ReadAll(data).ok());
    EXPECT_TRUE(store_->DeleteBlob(DigestOf(data)).ok());
  }
}

// ReadAsync (what a caller does when TryReadNow has no answer) serves a
// record too, later, and refuses a range past its end.
TEST_F(S3RecordTest, ReadAsyncAnswersFromTheRecord) {
  const std::string data = MakeData(3 * kBlock + 10, 11);
  ASSERT_TRUE(Put(data).ok());
  std::shared_ptr<const Blob> blob = *store_->OpenBlob(DigestOf(data));
  const std::shared_ptr<BufferPool> pool = BufferPool::Create({});
  for (const auto& [offset, length, ok] :
       std::vector<std::tuple<uint64_t, uint64_t, bool>>{
           {0, data.size(), true},
           {kBlock + 5, 100, true},
           {data.size() - 1, 2, false}}) {
    absl::Notification done;
    absl::StatusOr<Buffer> read = absl::UnknownError("not answered");
    blob->ReadAsync(BlobPart::kData, offset, pool->Take(length),
                    [&](absl::StatusOr<Buffer> answer) {
                      read = std::move(answer);
                      done.Notify();
                    });
    done.WaitForNotification();
    ASSERT_EQ(read.ok(), ok) << offset << ": " << read.status();
    if (ok) EXPECT_EQ(StringOf(*read), data.substr(offset, length));
  }
}

// A quarantined record is refused at once by the store that quarantined it.
TEST_F(S3RecordTest, AQuarantinedRecordIsRefused) {
  const std::string data = MakeData(2 * kBlock, 12);
  ASSERT_TRUE(Put(data).ok());
  ASSERT_TRUE(store_->OpenBlob(DigestOf(data)).ok());
  ASSERT_TRUE(store_->Quarantine(DigestOf(data), "test").ok());
  const absl::Status open = store_->OpenBlob(DigestOf(data)).status();
  EXPECT_TRUE(absl::IsDataLoss(open)) << open;
  EXPECT_FALSE(*store_->Has(DigestOf(data)));
}

// Another replica's opens go by its listing of quarantine/, at most a
// second old.
TEST_F(S3RecordTest, AQuarantineReachesAnotherReplicaWithinASecond) {
  const std::string data = MakeData(2 * kBlock, 13);
  ASSERT_TRUE(Put(data).ok());
  absl::StatusOr<std::unique_ptr<S3Store>> other =
      S3Store::Open(FakeS3StoreOptions(s3_));
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->OpenBlob(DigestOf(data)).ok());
  ASSERT_TRUE(store_->Quarantine(DigestOf(data), "test").ok());
  absl::SleepFor(absl::Milliseconds(1100));
  const absl::Status open = (*other)->OpenBlob(DigestOf(data)).status();
  EXPECT_TRUE(absl::IsDataLoss(open)) << open;
}

// A delete cut short can leave a quarantine mark without its blob: a Put of
// the content (a record or parts) lifts it, whichever replica puts.
TEST_F(S3RecordTest, APutLiftsAQuarantineMarkLeftWithoutItsBlob) {
  for (const bool sized : {true, false}) {
    SCOPED_TRACE(sized);
    const std::string data = MakeData(2 * kBlock, sized ? 14 : 15);
    ASSERT_TRUE(Put(data, sized).ok());
    ASSERT_TRUE(store_->Quarantine(DigestOf(data), "test").ok());
    S3Request remove;
    remove.op = "Raw";
    remove.method = "DELETE";
    remove.key = DescriptorKey(data);
    ASSERT_TRUE(client_->Call(std::move(remove)).status.ok());
    OpenStore(0);
    const absl::StatusOr<PutResult> put = Put(data, sized);
    ASSERT_TRUE(put.ok()) << put.status();
    EXPECT_FALSE(put->already_present);
    const absl::StatusOr<std::string> read = ReadAll(data);
    EXPECT_TRUE(read.ok() && *read == data) << read.status();
    EXPECT_FALSE(Object(layout_.QuarantineKey(DigestOf(data))).has_value());
  }
}

TEST_F(S3RecordTest, ATornRecordIsDataLoss) {
  const std::string data = MakeData(3 * kBlock, 5);
  ASSERT_TRUE(Put(data).ok());
  const std::string record = *Object(DescriptorKey(data));
  for (const size_t keep :
       {record.size() - 1, record.size() / 2, kDescriptorSize + 1}) {
    SetObject(DescriptorKey(data), record.substr(0, keep));
    const absl::Status open = store_->OpenBlob(DigestOf(data)).status();
    EXPECT_TRUE(absl::IsDataLoss(open)) << keep << ": " << open;
  }
}

// A descriptor object no verityd writes, from whoever else writes the
// bucket: one larger than any record is refused without being read whole
// (the GET asks for one byte more than the largest), an empty one as a
// damaged descriptor.
TEST_F(S3RecordTest, AnOversizedOrEmptyDescriptorObjectIsDataLoss) {
  const std::string data = MakeData(2 * kBlock, 8);
  ASSERT_TRUE(Put(data).ok());
  SetObject(DescriptorKey(data), std::string(kMaxRecordSize + 4096, 'x'));
  absl::Status open = store_->OpenBlob(DigestOf(data)).status();
  EXPECT_TRUE(absl::IsDataLoss(open)) << open;
  EXPECT_NE(open.message().find(absl::StrCat("over ", kMaxRecordSize)),
            std::string::npos)
      << open;
  SetObject(DescriptorKey(data), "");
  open = store_->OpenBlob(DigestOf(data)).status();
  EXPECT_TRUE(absl::IsDataLoss(open)) << open;
}

TEST_F(S3RecordTest, ARecordOfALaterVersionIsLeftAlone) {
  const std::string data = MakeData(2 * kBlock, 6);
  ASSERT_TRUE(Put(data).ok());
  std::string record = *Object(DescriptorKey(data));
  RecordFooter footer = *DecodeRecord(record, "");
  footer.version = kRecordVersion + 1;
  record.replace(record.size() - kRecordFooterSize, kRecordFooterSize,
                 EncodeRecordFooter(footer));
  SetObject(DescriptorKey(data), record);
  const absl::Status open = store_->OpenBlob(DigestOf(data)).status();
  EXPECT_TRUE(absl::IsUnimplemented(open)) << open;
  EXPECT_TRUE(*Object(DescriptorKey(data)) == record);
}

TEST_F(S3RecordTest, FecRepairsARecordUntilAPutReplacesIt) {
  OpenStore(2);
  const std::string data = MakeData(30 * kBlock + 100, 7);
  ASSERT_TRUE(Put(data).ok());
  std::shared_ptr<const Blob> blob = *store_->OpenBlob(DigestOf(data));
  EXPECT_EQ(blob->fec_roots(), 2);
  FlipRecordBit(data, 3 * kBlock + 7);
  blob = *store_->OpenBlob(DigestOf(data));
  std::shared_ptr<VerifiedBlob> verified = *VerifiedBlob::Create(blob);
  std::string read;
  const absl::Status bad = ReadVerified(*verified, 0, 31, &read);
  ASSERT_TRUE(absl::IsDataLoss(bad)) << bad;
  const absl::StatusOr<int> repaired = RepairFecGroup(*verified, 3);
  ASSERT_TRUE(repaired.ok()) << repaired.status();
  EXPECT_EQ(*repaired, 1);
  verified = *VerifiedBlob::Create(blob);
  ASSERT_TRUE(ReadVerified(*verified, 0, 31, &read).ok());
  EXPECT_TRUE(read == data);
  EXPECT_TRUE(Object(layout_.DamagedKey(DigestOf(data))).has_value());
  // A Put of the content writes the record again and lifts the mark.
  absl::StatusOr<PutResult> put = Put(data);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_FALSE(put->already_present);
  EXPECT_EQ(Object(DescriptorKey(data))->substr(0, data.size()), data);
  EXPECT_FALSE(Object(layout_.DamagedKey(DigestOf(data))).has_value());
}

TEST_F(S3RecordTest, SignaturesAndTheManifestMarkLiveInTheRecord) {
  const std::string data = MakeData(9000, 8);
  ASSERT_TRUE(Put(data, true, "signature one").ok());
  EXPECT_EQ(KeysOf(data).size(), 1u);
  absl::StatusOr<BlobInfo> info = store_->Stat(DigestOf(data));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->fsverity_signature, "signature one");
  EXPECT_FALSE(info->tree_manifest);
  // A later Put's signature and mark: the record written again.
  absl::StatusOr<PutResult> put = Put(data, true, "signature two", true);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_TRUE(put->already_present);
  OpenStore(0);
  info = store_->Stat(DigestOf(data));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->fsverity_signature, "signature two");
  EXPECT_TRUE(info->tree_manifest);
  EXPECT_EQ((*store_->OpenBlob(DigestOf(data)))->fsverity_signature(),
            "signature two");
  EXPECT_EQ(KeysOf(data).size(), 1u);
  EXPECT_TRUE(*ReadAll(data) == data);
  // A Put with neither keeps them.
  ASSERT_TRUE(Put(data).ok());
  EXPECT_EQ(store_->Stat(DigestOf(data))->fsverity_signature, "signature two");
}

// A new signature written over a record another writer changed since it
// was read (If-Match fails): read again and written over the new one; one
// that keeps changing is ABORTED after kNameWriteAttempts tries.
TEST_F(S3RecordTest, AnAmendThatLosesARaceReadsAgain) {
  const std::string data = MakeData(9000, 16);
  ASSERT_TRUE(Put(data, true, "signature one").ok());
  int races = 1;
  {
    absl::MutexLock lock(&counting_->mu);
    counting_->before = [&](const S3Request& request) {
      if (request.op != "AmendRecord" || races == 0) return;
      --races;
      // The same bytes, a new ETag: as another replica's rewrite.
      SetObject(DescriptorKey(data), *Object(DescriptorKey(data)));
    };
  }
  ResetOps();
  ASSERT_TRUE(Put(data, true, "signature two").ok());
  EXPECT_EQ(Ops("AmendRecord"), 2);
  EXPECT_EQ(store_->Stat(DigestOf(data))->fsverity_signature, "signature two");

  races = 100;
  const absl::Status lost = Put(data, true, "signature three").status();
  EXPECT_TRUE(absl::IsAborted(lost)) << lost;
  {
    absl::MutexLock lock(&counting_->mu);
    counting_->before = nullptr;
  }
  EXPECT_EQ(store_->Stat(DigestOf(data))->fsverity_signature, "signature two");
}

TEST_F(S3RecordTest, ListedSizedAndDeletedAsAnyBlob) {
  const std::string data = MakeData(20000, 9);
  ASSERT_TRUE(Put(data).ok());
  EXPECT_TRUE(*store_->Has(DigestOf(data)));
  EXPECT_EQ(*store_->DataSize(DigestOf(data)), data.size());
  absl::StatusOr<std::vector<StoredBlob>> stored = store_->ListStored("", 10);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  // Its data size, from its footer.
  EXPECT_EQ((*stored)[0].data_size, data.size());
  ASSERT_TRUE(store_->DeleteBlob(DigestOf(data)).ok());
  EXPECT_FALSE(*store_->Has(DigestOf(data)));
  EXPECT_TRUE(KeysOf(data).empty());
}

TEST_F(S3RecordTest, ABatchIsStoredWithItsPutsInFlightTogether) {
  std::vector<std::string> datas;
  std::vector<BatchPut> puts;
  for (uint64_t i = 0; i < 100; ++i)
    datas.push_back(MakeData(1000 + i, 20 + i));
  for (const std::string& data : datas) {
    puts.push_back(BatchPut{MerkleParams{}, DigestOf(data), data});
  }
  puts[5].digest = DigestOf("something else");
  const std::vector<absl::StatusOr<PutResult>> results = store_->PutBatch(puts);
  ASSERT_EQ(results.size(), puts.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (i == 5) {
      EXPECT_TRUE(absl::IsDataLoss(results[i].status())) << results[i].status();
      continue;
    }
    ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].status();
    EXPECT_EQ(KeysOf(datas[i]).size(), 1u);
    EXPECT_TRUE(*ReadAll(datas[i]) == datas[i]);
  }
}

}  // namespace
}  // namespace verity::server
