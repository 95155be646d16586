// FEC in the S3 store, over FakeS3: the fec object a Put writes (as the
// content arrives, or read back from the data object), the roots OpenBlob
// finds from its size, and repairs: a rebuilt block served over the damaged
// object, the blob marked damaged until a Put of it replaces its objects.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/merkle_builder.h"
#include "server/store/fec_repair.h"
#include "server/store/s3/s3_blob.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/s3/s3_store.h"
#include "server/store/s3/testing/fake_s3.h"
#include "server/store/s3/testing/fake_s3_store.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr int kRoots = 2;

MerkleTree TreeOf(absl::string_view data) {
  MerkleBuilder builder{MerkleParams{}};
  EXPECT_TRUE(builder.Update(AsBytes(data)).ok());
  return builder.Finish().value();
}

ParsedDigest DigestOf(absl::string_view data) {
  const MerkleTree tree = TreeOf(data);
  return ParsedDigest{tree.descriptor.hash_algorithm, tree.digest};
}

// The FEC area of `data` and its tree, by the windowed encoder (the stores
// stream theirs).
std::string FecAreaOf(absl::string_view data) {
  std::string blocks(data);
  blocks.resize((blocks.size() + kBlock - 1) / kBlock * kBlock, '\0');
  blocks += TreeOf(data).tree;
  std::string fec;
  const absl::Status encoded = EncodeFec(
      kRoots, kBlock, blocks.size() / kBlock,
      [&](uint64_t first, uint64_t count, absl::Span<uint8_t> out) {
        std::copy_n(blocks.begin() + first * kBlock, count * kBlock,
                    out.begin());
        return absl::OkStatus();
      },
      [&](absl::Span<const uint8_t> bytes) {
        fec.append(bytes.begin(), bytes.end());
        return absl::OkStatus();
      });
  EXPECT_TRUE(encoded.ok()) << encoded;
  return fec;
}

class S3FecTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenStore(kRoots); }

  void OpenStore(int fec_roots) {
    store_.reset();
    S3StoreOptions options = FakeS3StoreOptions(s3_);
    options.fec_roots = fec_roots;
    // Every blob as objects of its parts; s3_record_test has records'.
    options.record_max_bytes = 0;
    options.log = [this](absl::string_view line) {
      absl::MutexLock lock(&log_mu_);
      log_.emplace_back(line);
    };
    absl::StatusOr<std::unique_ptr<S3Store>> store = S3Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    absl::StatusOr<std::unique_ptr<S3Client>> client =
        S3Client::WithTransport(options.client, s3_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  // Puts `data`, telling the store its size or not.
  absl::StatusOr<PutResult> Put(absl::string_view data, bool sized) {
    absl::StatusOr<std::unique_ptr<PutWriter>> writer = store_->BeginPut(
        MerkleParams{}, std::nullopt,
        sized ? std::optional<uint64_t>(data.size()) : std::nullopt);
    if (!writer.ok()) return writer.status();
    for (size_t at = 0; at < data.size(); at += 100000) {
      absl::Status appended =
          (*writer)->Append(AsBytes(data.substr(at, 100000)));
      if (!appended.ok()) return appended;
    }
    return (*writer)->Commit(std::nullopt, "");
  }

  std::string Key(absl::string_view data, BlobObject what) const {
    return layout_.BlobKey(DigestOf(data), what);
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

  std::shared_ptr<const Blob> Open(absl::string_view data) {
    absl::StatusOr<std::shared_ptr<const Blob>> blob =
        store_->OpenBlob(DigestOf(data));
    EXPECT_TRUE(blob.ok()) << blob.status();
    return blob.value_or(nullptr);
  }

  bool Logged(absl::string_view what) {
    absl::MutexLock lock(&log_mu_);
    return std::any_of(log_.begin(), log_.end(), [&](const std::string& l) {
      return absl::StrContains(l, what);
    });
  }

  const S3Layout layout_{"p/"};
  std::shared_ptr<FakeS3> s3_ = std::make_shared<FakeS3>();
  std::unique_ptr<S3Client> client_;
  std::unique_ptr<S3Store> store_;
  absl::Mutex log_mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(log_mu_);
};

TEST_F(S3FecTest, PutsWriteTheFecAreaStreamedOrReadBack) {
  // Several multipart parts, the last block partial.
  const std::string data = MakeData((size_t{11} << 20) + 1234, 1);
  const std::string expected = FecAreaOf(data);
  for (const bool sized : {true, false}) {
    SCOPED_TRACE(sized ? "size given" : "size not given");
    s3_ = std::make_shared<FakeS3>();
    OpenStore(kRoots);
    ASSERT_TRUE(Put(data, sized).ok());
    const std::optional<std::string> fec = Object(Key(data, BlobObject::kFec));
    ASSERT_TRUE(fec.has_value());
    EXPECT_TRUE(*fec == expected);
    EXPECT_EQ(Open(data)->fec_roots(), kRoots);
  }
  // Nothing to protect in an empty blob; nothing written with FEC off.
  ASSERT_TRUE(Put("", true).ok());
  EXPECT_FALSE(Object(Key("", BlobObject::kFec)).has_value());
  OpenStore(0);
  const std::string other = MakeData(50000, 2);
  ASSERT_TRUE(Put(other, true).ok());
  EXPECT_FALSE(Object(Key(other, BlobObject::kFec)).has_value());
  EXPECT_EQ(Open(other)->fec_roots(), 0);
}

TEST_F(S3FecTest, TheRootsComeFromTheFecObjectsSize) {
  const std::string data = MakeData(300000, 3);
  ASSERT_TRUE(Put(data, true).ok());
  const std::string key = Key(data, BlobObject::kFec);
  const std::string fec = *Object(key);
  EXPECT_EQ(Open(data)->fec_roots(), kRoots);
  // A truncated or foreign area is no area: never used to rebuild.
  SetObject(key, fec.substr(0, fec.size() - 1));
  EXPECT_EQ(Open(data)->fec_roots(), 0);
  SetObject(key, fec + "x");
  EXPECT_EQ(Open(data)->fec_roots(), 0);
}

TEST_F(S3FecTest, ARepairIsServedOverTheObjectUntilAPutReplacesIt) {
  const std::string data = MakeData(30 * kBlock + 100, 4);
  ASSERT_TRUE(Put(data, true).ok());
  const std::string data_key = Key(data, BlobObject::kData);
  std::string damaged = data;
  damaged[3 * kBlock + 7] ^= 1;
  SetObject(data_key, damaged);

  std::shared_ptr<const Blob> blob = Open(data);
  absl::StatusOr<std::shared_ptr<VerifiedBlob>> verified =
      VerifiedBlob::Create(blob);
  ASSERT_TRUE(verified.ok());
  std::string read;
  const absl::Status bad = ReadVerified(**verified, 0, 31, &read);
  ASSERT_TRUE(absl::IsDataLoss(bad)) << bad;
  ASSERT_EQ(BadBlockOf(bad), 3u);
  const absl::StatusOr<int> repaired = RepairFecGroup(**verified, 3);
  ASSERT_TRUE(repaired.ok()) << repaired.status();
  EXPECT_EQ(*repaired, 1);

  // Every read of the blob now has the rebuilt bytes: whole, and ranges that
  // start, end or lie within the block.
  verified = VerifiedBlob::Create(blob);
  ASSERT_TRUE(ReadVerified(**verified, 0, 31, &read).ok());
  EXPECT_TRUE(read == data);
  for (const auto& [offset, length] :
       std::vector<std::pair<uint64_t, uint64_t>>{{3 * kBlock + 5, 10},
                                                  {3 * kBlock - 50, 100},
                                                  {4 * kBlock - 50, 100},
                                                  {kBlock, 5 * kBlock}}) {
    EXPECT_EQ(ReadBlobPart(*blob, BlobPart::kData, offset, length).value(),
              data.substr(offset, length))
        << offset;
  }
  // The object is as it was, and the blob is marked for a new copy.
  EXPECT_TRUE(*Object(data_key) == damaged);
  const std::optional<std::string> mark =
      Object(layout_.DamagedKey(DigestOf(data)));
  ASSERT_TRUE(mark.has_value());
  EXPECT_TRUE(absl::StrContains(*mark, "data block at offset 12288")) << *mark;

  // A Put of the same content replaces the objects and lifts the mark.
  absl::StatusOr<PutResult> put = Put(data, false);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_FALSE(put->already_present);
  EXPECT_TRUE(*Object(data_key) == data);
  EXPECT_FALSE(Object(layout_.DamagedKey(DigestOf(data))).has_value());
  put = Put(data, true);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_TRUE(put->already_present);
}

TEST_F(S3FecTest, AMarkThatCannotBeWrittenIsLoggedAndTriedAgain) {
  const std::string data = MakeData(10 * kBlock, 5);
  ASSERT_TRUE(Put(data, true).ok());
  std::shared_ptr<const Blob> blob = Open(data);
  const std::string block = data.substr(kBlock, kBlock);
  s3_->Inject(S3Fault{"PutDamaged", 0, S3FaultKind::kHttp503});
  // The repaired bytes are served whether or not the bucket took the mark.
  EXPECT_TRUE(blob->Rewrite(BlobPart::kData, kBlock, AsBytes(block)).ok());
  EXPECT_TRUE(Logged("could not mark"));
  EXPECT_FALSE(Object(layout_.DamagedKey(DigestOf(data))).has_value());
  s3_->Reset();
  EXPECT_TRUE(blob->Rewrite(BlobPart::kData, kBlock, AsBytes(block)).ok());
  EXPECT_TRUE(Object(layout_.DamagedKey(DigestOf(data))).has_value());
}

TEST_F(S3FecTest, RepairedBytesKeptAreBounded) {
  const std::string data = MakeData(10 * kBlock, 6);
  ASSERT_TRUE(Put(data, true).ok());
  std::shared_ptr<const Blob> blob = Open(data);
  const std::string too_much(kMaxRepairedBytes + 1, 'x');
  const absl::Status refused =
      blob->Rewrite(BlobPart::kData, 0, AsBytes(too_much));
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  // Nothing of it is served.
  EXPECT_EQ(ReadBlobPart(*blob, BlobPart::kData, 0, kBlock).value(),
            data.substr(0, kBlock));
  EXPECT_TRUE(
      blob->Rewrite(BlobPart::kData, 0, AsBytes(data.substr(0, kBlock))).ok());
}

}  // namespace
}  // namespace verity::server
