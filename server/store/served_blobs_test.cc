// ServedBlobs on a real file store: once a blob is quarantined or deleted, no
// read opens the old copy again, not even one whose open overlapped the
// removal; a Put of new content replaces whatever copy was cached.

#include "server/store/served_blobs.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/descriptor.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/forwarding_store.h"
#include "server/store/store.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

// Forwards to a store, and runs `before_quarantine` and `after_open` at those
// points: what another thread could do there, made deterministic.
class HookedStore final : public ForwardingStore {
 public:
  explicit HookedStore(Store* store) : ForwardingStore(*store) {}

  // Each runs once. Set by the test thread only; run from const OpenBlob().
  mutable std::function<void()> after_open;
  std::function<void()> before_quarantine;

  absl::StatusOr<std::shared_ptr<const Blob>> OpenBlob(
      const ParsedDigest& digest) const override {
    absl::StatusOr<std::shared_ptr<const Blob>> blob = inner().OpenBlob(digest);
    if (after_open) std::exchange(after_open, nullptr)();
    return blob;
  }
  absl::Status Quarantine(const ParsedDigest& digest,
                          absl::string_view reason) override {
    if (before_quarantine) std::exchange(before_quarantine, nullptr)();
    return inner().Quarantine(digest, reason);
  }
};

class ServedBlobsTest : public FileStoreFixture {
 protected:
  void SetUp() override {
    FileStoreFixture::SetUp();
    data_ = MakeData(50 * 4096 + 3, 1);
    digest_ = DigestFromText(MustPut(data_, "a-name"));
    hooked_ = std::make_unique<HookedStore>(store_.get());
    blobs_ =
        std::make_unique<ServedBlobs>(hooked_.get(), VerifiedBlobCacheOptions(),
                                      /*verify_once=*/false);
  }

  std::shared_ptr<VerifiedBlob> MustOpen() {
    absl::StatusOr<std::shared_ptr<VerifiedBlob>> blob = blobs_->Open(digest_);
    EXPECT_TRUE(blob.ok()) << blob.status();
    return blob.ok() ? *blob : nullptr;
  }

  // Puts data_ again through blobs_.
  absl::StatusOr<PutResult> PutAgain() {
    absl::StatusOr<std::unique_ptr<PutWriter>> writer =
        blobs_->BeginPut(MerkleParams(), digest_);
    if (!writer.ok()) return writer.status();
    if (absl::Status appended = (*writer)->Append(AsBytes(data_));
        !appended.ok()) {
      return appended;
    }
    return blobs_->CommitPut(**writer, PutCommit{digest_, {}, ""});
  }

  std::string data_;
  ParsedDigest digest_;
  std::unique_ptr<HookedStore> hooked_;
  std::unique_ptr<ServedBlobs> blobs_;
};

TEST_F(ServedBlobsTest, OpensOnceAndShares) {
  std::shared_ptr<VerifiedBlob> first = MustOpen();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(MustOpen(), first);
  std::string out;
  ASSERT_TRUE(ReadVerified(*first, 0, 51, &out).ok());
  EXPECT_TRUE(out == data_);
}

TEST_F(ServedBlobsTest, AQuarantinedBlobIsNoLongerOpened) {
  ASSERT_NE(MustOpen(), nullptr);
  ASSERT_TRUE(blobs_->Quarantine(digest_, "found corrupt").ok());
  EXPECT_EQ(blobs_->Open(digest_).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(ServedBlobsTest, AnOpenOverlappingAQuarantineIsNotCached) {
  // The store opens the blob, then (before the open is cached) the blob is
  // quarantined: this read may finish with its copy, the next may not.
  hooked_->after_open = [this] {
    ASSERT_TRUE(blobs_->Quarantine(digest_, "found corrupt").ok());
  };
  ASSERT_NE(MustOpen(), nullptr);
  EXPECT_EQ(blobs_->Open(digest_).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(ServedBlobsTest, AReadWhileTheStoreQuarantinesIsNotServedAfter) {
  // A read that comes just before the store moves the blob away caches it
  // again: the cache entry must go after the store's quarantine, not before.
  std::shared_ptr<VerifiedBlob> during;
  hooked_->before_quarantine = [&] { during = MustOpen(); };
  ASSERT_TRUE(blobs_->Quarantine(digest_, "found corrupt").ok());
  EXPECT_NE(during, nullptr);
  EXPECT_EQ(blobs_->Open(digest_).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(ServedBlobsTest, ADeletedBlobIsNoLongerOpened) {
  ASSERT_NE(MustOpen(), nullptr);
  ASSERT_TRUE(blobs_->DeleteBlob(digest_).ok());
  EXPECT_EQ(blobs_->Open(digest_).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ServedBlobsTest, AnOpenOverlappingADeleteIsNotCached) {
  hooked_->after_open = [this] {
    ASSERT_TRUE(blobs_->DeleteBlob(digest_).ok());
  };
  // Opened before the delete, so still readable by this read.
  std::shared_ptr<VerifiedBlob> opened = MustOpen();
  ASSERT_NE(opened, nullptr);
  std::string out;
  EXPECT_TRUE(ReadVerified(*opened, 0, 1, &out).ok());
  EXPECT_EQ(blobs_->Open(digest_).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ServedBlobsTest, DeletingANameKeepsTheBlobServed) {
  std::shared_ptr<VerifiedBlob> first = MustOpen();
  ASSERT_TRUE(blobs_->DeleteName("a-name").ok());
  EXPECT_EQ(blobs_->store().ResolveName("a-name").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(MustOpen(), first);
}

TEST_F(ServedBlobsTest, APutReplacesACachedCopyQuarantinedElsewhere) {
  // Another replica of a shared store quarantined the blob: this server's
  // cache still has its copy open, until a Put stores the content anew.
  std::shared_ptr<VerifiedBlob> first = MustOpen();
  ASSERT_TRUE(store_->Quarantine(digest_, "found corrupt elsewhere").ok());
  EXPECT_EQ(MustOpen(), first);
  absl::StatusOr<PutResult> put = PutAgain();
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_FALSE(put->already_present);
  std::shared_ptr<VerifiedBlob> fresh = MustOpen();
  ASSERT_NE(fresh, nullptr);
  EXPECT_NE(fresh, first);
  std::string out;
  ASSERT_TRUE(ReadVerified(*fresh, 0, 51, &out).ok());
  EXPECT_TRUE(out == data_);
}

TEST_F(ServedBlobsTest, APutAfterAQuarantineServesTheNewCopy) {
  ASSERT_NE(MustOpen(), nullptr);
  ASSERT_TRUE(blobs_->Quarantine(digest_, "found corrupt").ok());
  absl::StatusOr<PutResult> put = PutAgain();
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_FALSE(put->already_present);
  EXPECT_NE(MustOpen(), nullptr);
}

TEST_F(ServedBlobsTest, APutOfContentAlreadyStoredKeepsTheCachedBlob) {
  std::shared_ptr<VerifiedBlob> first = MustOpen();
  absl::StatusOr<PutResult> put = PutAgain();
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_TRUE(put->already_present);
  EXPECT_EQ(MustOpen(), first);
}

}  // namespace
}  // namespace verity::server
