// Tests FileStore's operations on a live store: puts byte-exact with
// lib's tree builder, dedup, refusals that store nothing, names, listing,
// deletion, quarantine and reads of damaged files.

#include "server/store/file/file_store.h"

#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/tree/file_digest.h"
#include "server/store/file/testing/file_store.h"

namespace verity::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

using BlobStoreTest = FileStoreFixture;

TEST_F(BlobStoreTest, PutMatchesBuildMerkleTreeFromFile) {
  uint64_t total = 0;
  for (const HashAlgorithm algorithm :
       {HashAlgorithm::kSha256, HashAlgorithm::kSha512}) {
    for (const size_t size : {0, 1, 4095, 4096, 4097, (3 << 20) + 123}) {
      SCOPED_TRACE(absl::StrCat(HashAlgorithmName(algorithm), " ", size));
      MerkleParams params;
      params.hash_algorithm = algorithm;
      params.salt = "salt and pepper";
      const std::string data = MakeData(size, size);
      const std::string path = FreshTestDir("_input") + "/input";
      ASSERT_TRUE(WriteWholeFile(path, data).ok());
      const absl::StatusOr<MerkleTree> expected =
          BuildMerkleTreeFromFile(path, params, 1);
      ASSERT_TRUE(expected.ok()) << expected.status();

      const absl::StatusOr<PutResult> put =
          PutBytes(store_.get(), data, params);
      ASSERT_TRUE(put.ok()) << put.status();
      EXPECT_FALSE(put->already_present);
      const std::string text = put->info.digest;
      EXPECT_EQ(text, FormatDigest(algorithm, AsBytes(expected->digest)));
      EXPECT_EQ(put->info.tree_size, expected->tree.size());
      total += size;

      const absl::StatusOr<std::shared_ptr<const Blob>> blob =
          store_->OpenBlob(DigestFromText(text));
      ASSERT_TRUE(blob.ok()) << blob.status();
      EXPECT_EQ((*blob)->digest_text(), text);
      EXPECT_EQ((*blob)->params().salt, params.salt);
      EXPECT_EQ(ReadAllData(**blob).value(), data);
      EXPECT_EQ(ReadAllTree(**blob).value(), expected->tree);

      const std::string dir = BlobDirFor(root_, text);
      EXPECT_EQ(ReadWholeFile(dir + "/tree").value(), expected->tree);
      EXPECT_EQ(ReadWholeFile(dir + "/descriptor").value(),
                expected->descriptor.Serialize().value());
      EXPECT_EQ(ReadWholeFile(dir + "/data").value(), data);
    }
  }
  EXPECT_EQ(store_->blob_count(), 12u);
  EXPECT_EQ(store_->stored_bytes(), total);
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
}

TEST_F(BlobStoreTest, SameContentIsStoredOnce) {
  const std::string data = MakeData(10000, 1);
  const std::string text = MustPut(data);
  const absl::StatusOr<PutResult> again =
      PutBytes(store_.get(), data, {}, "second/copy");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_present);
  EXPECT_EQ(again->info.digest, text);
  EXPECT_THAT(again->info.names, ElementsAre("second/copy"));
  EXPECT_EQ(store_->blob_count(), 1u);
  EXPECT_EQ(store_->stored_bytes(), data.size());
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
}

TEST_F(BlobStoreTest, ExpectedDigestMismatchStoresNothing) {
  const std::string data = MakeData(5000, 2);
  const std::string other = MustPut(MakeData(5000, 3));
  const absl::StatusOr<PutResult> put =
      PutBytes(store_.get(), data, {}, "name", DigestFromText(other));
  EXPECT_EQ(put.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(put.status().message(), HasSubstr(other));
  EXPECT_EQ(store_->blob_count(), 1u);
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
  EXPECT_EQ(store_->ResolveName("name").status().code(),
            absl::StatusCode::kNotFound);

  // The same expectation of the right algorithm but other content, and the
  // right digest.
  MerkleParams sha512;
  sha512.hash_algorithm = HashAlgorithm::kSha512;
  EXPECT_EQ(PutBytes(store_.get(), MakeData(5000, 3), sha512, "",
                     DigestFromText(other))
                .status()
                .code(),
            absl::StatusCode::kDataLoss);
  const std::string text = MustPut(data);
  EXPECT_TRUE(PutBytes(store_.get(), data, {}, "", DigestFromText(text)).ok());
}

TEST_F(BlobStoreTest, OversizedBlobIsRefusedAndNothingStored) {
  max_blob_bytes_ = 10000;
  Reopen();
  absl::StatusOr<std::unique_ptr<PutWriter>> writer =
      store_->BeginPut(MerkleParams{});
  ASSERT_TRUE(writer.ok()) << writer.status();
  const std::string data = MakeData(10001, 4);
  EXPECT_TRUE((*writer)->Append(AsBytes(data.substr(0, 6000))).ok());
  EXPECT_EQ((*writer)->Append(AsBytes(data.substr(6000))).code(),
            absl::StatusCode::kResourceExhausted);
  // The staging directory goes at once, not when the writer is destroyed.
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
  EXPECT_EQ((*writer)->Append(AsBytes("x")).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ((*writer)->Commit(std::nullopt, "").status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(store_->blob_count(), 0u);

  EXPECT_TRUE(PutBytes(store_.get(), data.substr(0, 10000)).ok());
}

TEST_F(BlobStoreTest, AbandonedPutLeavesNothing) {
  {
    absl::StatusOr<std::unique_ptr<PutWriter>> writer =
        store_->BeginPut(MerkleParams{});
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Append(AsBytes(MakeData(9000, 5))).ok());
    EXPECT_THAT(EntriesOf(tmp_dir()), ::testing::SizeIs(1));
  }
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
  EXPECT_EQ(store_->blob_count(), 0u);
}

TEST_F(BlobStoreTest, CommitEndsThePut) {
  absl::StatusOr<std::unique_ptr<PutWriter>> writer =
      store_->BeginPut(MerkleParams{});
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Commit(std::nullopt, "").ok());
  EXPECT_EQ((*writer)->Append(AsBytes("x")).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*writer)->Commit(std::nullopt, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(BlobStoreTest, BadParamsAreInvalidArgument) {
  MerkleParams small;
  small.block_size = 512;
  MerkleParams large;
  large.block_size = 131072;
  MerkleParams odd;
  odd.block_size = 5000;
  MerkleParams salty;
  salty.salt = std::string(33, 's');
  for (const MerkleParams& params : {small, large, odd, salty}) {
    EXPECT_EQ(store_->BeginPut(params).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  MerkleParams edges;
  edges.block_size = 1024;
  EXPECT_TRUE(store_->BeginPut(edges).ok());
  edges.block_size = 65536;
  EXPECT_TRUE(store_->BeginPut(edges).ok());
}

TEST_F(BlobStoreTest, NamesResolveAndMove) {
  const std::string a = MustPut(MakeData(100, 6), "dir/file.txt");
  EXPECT_EQ(FormatDigest(HashAlgorithm::kSha256,
                         AsBytes(store_->ResolveName("dir/file.txt")->digest)),
            a);
  const std::string b = MustPut(MakeData(100, 7), "dir/file.txt");
  const absl::StatusOr<ParsedDigest> resolved =
      store_->ResolveName("dir/file.txt");
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->digest, DigestFromText(b).digest);
  EXPECT_THAT(store_->Stat(DigestFromText(a))->names, IsEmpty());
  EXPECT_THAT(store_->Stat(DigestFromText(b))->names,
              ElementsAre("dir/file.txt"));
  EXPECT_EQ(store_->ResolveName("missing").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ResolveName("/abs").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(BlobStoreTest, InvalidNameStoresNothing) {
  const std::vector<std::string> names = {
      "/abs", "a//b", "a/./b", "../up", "dir/", std::string(1025, 'n')};
  for (const std::string& name : names) {
    EXPECT_EQ(PutBytes(store_.get(), MakeData(10, 8), {}, name).status().code(),
              absl::StatusCode::kInvalidArgument)
        << name;
  }
  EXPECT_EQ(store_->blob_count(), 0u);
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
}

TEST_F(BlobStoreTest, ListPaginatesInDigestOrder) {
  std::vector<std::string> digests;
  MerkleParams sha512;
  sha512.hash_algorithm = HashAlgorithm::kSha512;
  for (int i = 0; i < 5; ++i) {
    digests.push_back(MustPut(MakeData(100, 10 + i), "",
                              i % 2 == 0 ? MerkleParams{} : sha512));
  }
  std::sort(digests.begin(), digests.end());
  std::vector<std::string> listed;
  std::string after;
  for (;;) {
    const std::vector<BlobInfo> page = *store_->List(after, 2);
    EXPECT_LE(page.size(), 2u);
    if (page.empty()) break;
    for (const BlobInfo& info : page) listed.push_back(info.digest);
    after = page.back().digest;
  }
  EXPECT_EQ(listed, digests);
  EXPECT_THAT(*store_->List("", 0), IsEmpty());
  EXPECT_EQ(store_->List("sha256:", 100)->size(), 5u);
  EXPECT_EQ(store_->List("sha512:", 100)->size(), 2u);
}

TEST_F(BlobStoreTest, DeleteBlobRemovesItsNames) {
  const std::string data = MakeData(50000, 20);
  const std::string text = MustPut(data, "one");
  MustPut(data, "two");
  MustPut(MakeData(10, 21), "three");
  const absl::StatusOr<std::shared_ptr<const Blob>> open =
      store_->OpenBlob(DigestFromText(text));
  ASSERT_TRUE(open.ok()) << open.status();

  ASSERT_TRUE(store_->DeleteBlob(DigestFromText(text)).ok());
  EXPECT_EQ(store_->OpenBlob(DigestFromText(text)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->Stat(DigestFromText(text)).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ResolveName("one").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ResolveName("two").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->ResolveName("three").ok());
  EXPECT_THAT(EntriesOf(root_ + "/names"), ::testing::SizeIs(1));
  EXPECT_EQ(store_->DeleteBlob(DigestFromText(text)).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->blob_count(), 1u);
  EXPECT_EQ(store_->stored_bytes(), 10u);
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
  // An open blob stays readable.
  EXPECT_EQ(ReadAllData(**open).value(), data);
}

TEST_F(BlobStoreTest, DeleteNameKeepsTheBlob) {
  const std::string text = MustPut(MakeData(10, 22), "name");
  ASSERT_TRUE(store_->DeleteName("name").ok());
  EXPECT_EQ(store_->ResolveName("name").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteName("name").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteName("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(store_->OpenBlob(DigestFromText(text)).ok());
  EXPECT_THAT(EntriesOf(root_ + "/names"), IsEmpty());
}

TEST_F(BlobStoreTest, QuarantinedBlobIsNotServedUntilPutAgain) {
  const std::string data = MakeData(20000, 23);
  const std::string text = MustPut(data, "q");
  const ParsedDigest digest = DigestFromText(text);
  ASSERT_TRUE(store_->Quarantine(digest, "bad block 3").ok());
  EXPECT_TRUE(log_.Contains("bad block 3"));
  const absl::Status open = store_->OpenBlob(digest).status();
  EXPECT_EQ(open.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(open.message(), HasSubstr("quarantined"));
  EXPECT_EQ(store_->Stat(digest).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(*store_->List("", 10), IsEmpty());
  EXPECT_EQ(store_->blob_count(), 0u);
  EXPECT_EQ(store_->stored_bytes(), 0u);
  EXPECT_TRUE(store_->Quarantine(digest, "again").ok());
  EXPECT_TRUE(store_->ResolveName("q").ok());

  const absl::StatusOr<PutResult> again = PutBytes(store_.get(), data);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->already_present);
  EXPECT_THAT(again->info.names, ElementsAre("q"));
  EXPECT_EQ(ReadAllData(*store_->OpenBlob(digest).value()).value(), data);
  EXPECT_THAT(EntriesOf(root_ + "/quarantine"), IsEmpty());
}

TEST_F(BlobStoreTest, DeleteRemovesAQuarantinedBlob) {
  const std::string text = MustPut(MakeData(20, 24), "gone");
  const ParsedDigest digest = DigestFromText(text);
  ASSERT_TRUE(store_->Quarantine(digest, "test").ok());
  ASSERT_TRUE(store_->DeleteBlob(digest).ok());
  EXPECT_EQ(store_->OpenBlob(digest).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ResolveName("gone").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(EntriesOf(root_ + "/quarantine"), IsEmpty());
  EXPECT_EQ(store_->Quarantine(digest, "test").code(),
            absl::StatusCode::kNotFound);
}

TEST_F(BlobStoreTest, ReadsOfATruncatedFileAreDataLoss) {
  const std::string text = MustPut(MakeData(10000, 25));
  const absl::StatusOr<std::shared_ptr<const Blob>> blob =
      store_->OpenBlob(DigestFromText(text));
  ASSERT_TRUE(blob.ok()) << blob.status();
  ASSERT_EQ(truncate((BlobDirFor(root_, text) + "/data").c_str(), 100), 0);
  const absl::Status read =
      ReadBlobPart(**blob, BlobPart::kData, 0, 4096).status();
  EXPECT_EQ(read.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(read.message(), HasSubstr(text));
  EXPECT_THAT(read.message(), HasSubstr("offset 100"));
  // Past the recorded size is the caller's mistake, not damage.
  EXPECT_EQ(ReadBlobPart(**blob, BlobPart::kData, 9000, 4096).status().code(),
            absl::StatusCode::kOutOfRange);
  // Opened afresh, the size mismatch is caught up front.
  EXPECT_EQ(store_->OpenBlob(DigestFromText(text)).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(BlobStoreTest, ConcurrentPutsOfOneContentStoreItOnce) {
  const std::string data = MakeData(300000, 26);
  std::vector<absl::StatusOr<PutResult>> results(16);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = PutBytes(store_.get(), data, {}, absl::StrCat("n", i));
    });
  }
  for (std::thread& thread : threads) thread.join();
  int fresh = 0;
  for (const absl::StatusOr<PutResult>& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    fresh += result->already_present ? 0 : 1;
  }
  EXPECT_EQ(fresh, 1);
  EXPECT_EQ(store_->blob_count(), 1u);
  EXPECT_THAT((*store_->List("", 1))[0].names, SizeIs(16));
  EXPECT_THAT(EntriesOf(tmp_dir()), IsEmpty());
}

TEST_F(BlobStoreTest, MalformedDigestIsInvalidArgument) {
  ParsedDigest digest;
  digest.digest = "short";
  EXPECT_EQ(store_->OpenBlob(digest).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->DeleteBlob(digest).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace verity::server
