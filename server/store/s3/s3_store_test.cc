// S3Store against a real radosgw (run through tests/testing/with_ceph.sh):
// round trips of every tree parameter and of sizes across several multipart
// parts, verified reads, names, listing, deletion and quarantine; objects
// damaged behind the store's back read as DATA_LOSS; an unfinished Put leaves
// nothing visible.

#include "server/store/s3/s3_store.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "server/store/s3/s3_client.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/s3/s3_xml.h"
#include "server/store/s3/testing/radosgw.h"
#include "server/store/testing/blob_reads.h"
#include "server/store/verified_blob.h"

namespace verity::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr size_t kPart = size_t{5} << 20;  // S3's smallest part

S3StoreOptions RadosgwOptions(const std::string& prefix) {
  S3StoreOptions options;
  options.client = TestRadosgwOptions();
  options.prefix = prefix;
  options.part_bytes = kPart;
  options.log = [](absl::string_view) {};
  return options;
}

class S3StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(HaveTestRadosgw())
        << "run through tests/testing/with_ceph.sh, which sets S3_*";
    prefix_ = absl::StrCat(
        "store-test/",
        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "/");
    absl::StatusOr<std::unique_ptr<S3Store>> store =
        S3Store::Open(RadosgwOptions(prefix_));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    absl::StatusOr<std::unique_ptr<S3Client>> client =
        S3Client::Create(TestRadosgwOptions());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  // The bucket and the layout the store uses, seen from outside it.
  S3Client& client() { return *client_; }
  S3Layout layout() const { return S3Layout(prefix_); }

  // Puts `data` in pieces of `chunk` bytes; with the digest in advance or not.
  absl::StatusOr<PutResult> Put(const std::string& data,
                                const MerkleParams& params = {},
                                const std::string& name = "",
                                bool expected_in_advance = true,
                                size_t chunk = 100003) {
    std::optional<ParsedDigest> expected;
    if (expected_in_advance) {
      expected = MakeTestBlob(data, params).digest;
    }
    absl::StatusOr<std::unique_ptr<PutWriter>> writer =
        store_->BeginPut(params, expected);
    if (!writer.ok()) return writer.status();
    for (size_t at = 0; at < data.size(); at += chunk) {
      absl::Status appended =
          (*writer)->Append(AsBytes(absl::string_view(data).substr(at, chunk)));
      if (!appended.ok()) return appended;
    }
    return (*writer)->Commit(expected, name);
  }

  // Every byte of the blob, read and verified as the server does.
  absl::StatusOr<std::string> ReadVerified(const ParsedDigest& digest) {
    absl::StatusOr<std::shared_ptr<const Blob>> blob = store_->OpenBlob(digest);
    if (!blob.ok()) return blob.status();
    absl::StatusOr<std::shared_ptr<VerifiedBlob>> verified =
        VerifiedBlob::Create(*blob);
    if (!verified.ok()) return verified.status();
    const uint64_t blocks = (*blob)->geometry().data_block_count();
    std::string out;
    for (uint64_t first = 0; first < blocks; first += 64) {
      std::string chunk;
      absl::Status read = server::ReadVerified(
          **verified, first, std::min(blocks, first + 64), &chunk);
      if (!read.ok()) return read;
      out += chunk;
    }
    return out;
  }

  // Writes `body` under `key` of this test's prefix straight to the bucket,
  // as a careless tool or a failing disk would.
  void Overwrite(const std::string& key, const std::string& body) {
    S3Request request;
    request.op = "PutObject";
    request.method = "PUT";
    request.key = key;
    request.body = body;
    ASSERT_TRUE(client().Call(std::move(request)).status.ok());
  }

  std::string Fetch(const std::string& key) {
    S3Request request;
    request.op = "GetObject";
    request.key = key;
    return client().Call(std::move(request)).body;
  }

  std::string prefix_;
  std::unique_ptr<S3Store> store_;
  std::unique_ptr<S3Client> client_;
};

TEST_F(S3StoreTest, RoundTripsOfEveryTreeParameterAndSize) {
  const std::vector<MerkleParams> params = {
      TestParams(HashAlgorithm::kSha256, 4096),
      TestParams(HashAlgorithm::kSha512, 1024, "salt"),
      TestParams(HashAlgorithm::kSha256, 65536, std::string(32, 's')),
  };
  const std::vector<size_t> sizes = {0,      1,     4096,
                                     100000, kPart, 2 * kPart + 12345};
  uint32_t seed = 1;
  const auto round_trip = [&](const MerkleParams& p, size_t size) {
    SCOPED_TRACE(absl::StrCat("block ", p.block_size, " size ", size,
                              " format ", static_cast<int>(p.format)));
    const TestBlob blob = MakeRandomTestBlob(size, p, seed++);
    absl::StatusOr<PutResult> put = Put(blob.data, p);
    ASSERT_TRUE(put.ok()) << put.status();
    EXPECT_FALSE(put->already_present);
    EXPECT_EQ(put->info.digest, blob.digest_text);
    EXPECT_EQ(put->info.tree_size, blob.tree.tree.size());
    absl::StatusOr<std::string> read = ReadVerified(blob.digest);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(*read == blob.data);
    // The objects are the blob's, byte for byte.
    EXPECT_TRUE(Fetch(layout().BlobKey(blob.digest, BlobObject::kTree)) ==
                blob.tree.tree);
    EXPECT_EQ(Fetch(layout().BlobKey(blob.digest, BlobObject::kDescriptor)),
              *blob.tree.descriptor.Serialize());
  };
  for (const MerkleParams& p : params) {
    for (size_t size : sizes) round_trip(p, size);
  }
  // A dm-verity tree (whole blocks; a longer salt; its descriptor is a
  // superblock and the root hash).
  MerkleParams dm =
      TestParams(HashAlgorithm::kSha256, 4096, std::string(200, 'd'));
  dm.format = TreeFormat::kDmVerity;
  for (size_t size : {size_t{4096}, 2 * kPart + 3 * 4096}) round_trip(dm, size);
}

TEST_F(S3StoreTest, APutWithoutTheDigestInAdvanceIsStagedThenMoved) {
  const TestBlob blob = MakeRandomTestBlob(2 * kPart + 7, MerkleParams{}, 3);
  absl::StatusOr<PutResult> put = Put(blob.data, {}, "", false);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_TRUE(*ReadVerified(blob.digest) == blob.data);
  S3Request list;
  list.op = "ListObjectsV2";
  list.query = {{"list-type", "2"}, {"prefix", prefix_ + "uploads/"}};
  EXPECT_THAT(ParseListObjects(client().Call(list).body)->objects, IsEmpty());
}

TEST_F(S3StoreTest, AgainIsAlreadyPresentAndAWrongDigestStoresNothing) {
  const std::string data = "content";
  ASSERT_TRUE(Put(data).ok());
  absl::StatusOr<PutResult> again = Put(data);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_present);
  const ParsedDigest other = MakeTestBlob("other", {}).digest;
  std::unique_ptr<PutWriter> writer = *store_->BeginPut({}, other);
  ASSERT_TRUE(writer->Append(AsBytes(data)).ok());
  EXPECT_EQ(writer->Commit(other, "").status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(store_->OpenBlob(other).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(S3StoreTest, AnUnfinishedPutLeavesNothingVisible) {
  const TestBlob blob = MakeRandomTestBlob(3 * kPart, MerkleParams{}, 9);
  {
    std::unique_ptr<PutWriter> writer = *store_->BeginPut({}, blob.digest);
    ASSERT_TRUE(writer->Append(AsBytes(blob.data)).ok());
  }  // abandoned before Commit
  EXPECT_EQ(store_->OpenBlob(blob.digest).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->Stat(blob.digest).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(*store_->List("", 10), IsEmpty());
  S3Request uploads;
  uploads.op = "ListMultipartUploads";
  uploads.query = {{"uploads", ""}, {"prefix", prefix_}};
  EXPECT_THAT(ParseListUploads(client().Call(uploads).body)->uploads,
              IsEmpty());
}

TEST_F(S3StoreTest, NamesListingAndDeletion) {
  const TestBlob a = MakeRandomTestBlob(1000, MerkleParams{}, 1);
  const TestBlob b = MakeRandomTestBlob(2000, MerkleParams{}, 2);
  ASSERT_TRUE(Put(a.data, {}, "docs/a").ok());
  ASSERT_TRUE(Put(b.data, {}, "b").ok());
  EXPECT_EQ(*store_->ResolveName("docs/a"), a.digest);
  EXPECT_EQ(store_->ResolveName("nope").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ResolveName("../x").status().code(),
            absl::StatusCode::kInvalidArgument);
  // Repointing: the last writer wins, and the old blob loses the name.
  ASSERT_TRUE(Put(b.data, {}, "docs/a").ok());
  EXPECT_EQ(*store_->ResolveName("docs/a"), b.digest);
  EXPECT_THAT(store_->Stat(a.digest)->names, IsEmpty());
  EXPECT_THAT(store_->Stat(b.digest)->names, ElementsAre("b", "docs/a"));
  // Listing in digest order, paged.
  std::vector<std::string> listed;
  std::string after;
  while (true) {
    const std::vector<BlobInfo> page = *store_->List(after, 1);
    if (page.empty()) break;
    listed.push_back(page[0].digest);
    after = page[0].digest;
  }
  std::vector<std::string> expected = {a.digest_text, b.digest_text};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(listed, expected);
  ASSERT_TRUE(store_->DeleteName("b").ok());
  EXPECT_EQ(store_->ResolveName("b").status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(store_->DeleteBlob(b.digest).ok());
  EXPECT_EQ(store_->ResolveName("docs/a").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->OpenBlob(b.digest).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteBlob(b.digest).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->List("", 10)->size(), 1u);
}

TEST_F(S3StoreTest, DamageBehindTheStoresBackIsDataLoss) {
  const TestBlob blob = MakeRandomTestBlob(3 * 4096 * 64, MerkleParams{}, 4);
  const TestBlob other = MakeRandomTestBlob(3 * 4096 * 64, MerkleParams{}, 5);
  ASSERT_TRUE(Put(blob.data).ok());
  ASSERT_TRUE(Put(other.data).ok());
  const std::string data_key = layout().BlobKey(blob.digest, BlobObject::kData);
  const std::string tree_key = layout().BlobKey(blob.digest, BlobObject::kTree);
  std::string flipped = blob.data;
  flipped[100000] ^= 1;
  struct Damage {
    std::string what, key, body;
  };
  const std::vector<Damage> damages = {
      {"a byte of the data", data_key, flipped},
      {"a byte of the tree", tree_key,
       [&] {
         std::string t = blob.tree.tree;
         t[t.size() - 1] ^= 1;
         return t;
       }()},
      {"truncated data", data_key, blob.data.substr(0, 5000)},
      {"another blob's data", data_key, other.data},
      {"another blob's tree", tree_key, other.tree.tree},
  };
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.what);
    Overwrite(damage.key, damage.body);
    absl::StatusOr<std::string> read = ReadVerified(blob.digest);
    EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss)
        << read.status();
    EXPECT_NE(read.status().message().find(blob.digest_text), std::string::npos)
        << read.status();
    // Mended by a Put of the right content? No: the store says it has it.
    // Put it back as it was, for the next case.
    Overwrite(data_key, blob.data);
    Overwrite(tree_key, blob.tree.tree);
    EXPECT_TRUE(ReadVerified(blob.digest).ok());
  }
  Overwrite(layout().BlobKey(blob.digest, BlobObject::kDescriptor),
            "not a descriptor");
  EXPECT_EQ(store_->OpenBlob(blob.digest).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(S3StoreTest, QuarantineReachesEveryReplicaAndAPutLiftsIt) {
  const TestBlob blob = MakeRandomTestBlob(10000, MerkleParams{}, 6);
  ASSERT_TRUE(Put(blob.data, {}, "q").ok());
  std::unique_ptr<S3Store> replica = *S3Store::Open(RadosgwOptions(prefix_));
  ASSERT_TRUE(replica->OpenBlob(blob.digest).ok());
  ASSERT_TRUE(store_->Quarantine(blob.digest, "test").ok());
  EXPECT_EQ(replica->OpenBlob(blob.digest).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(replica->Stat(blob.digest).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_THAT(*replica->List("", 10), IsEmpty());
  // The name still resolves; a re-put serves the blob again.
  EXPECT_EQ(*replica->ResolveName("q"), blob.digest);
  absl::StatusOr<PutResult> again = Put(blob.data);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->already_present);
  EXPECT_TRUE(*ReadVerified(blob.digest) == blob.data);
  EXPECT_TRUE(replica->OpenBlob(blob.digest).ok());
}

TEST_F(S3StoreTest, ConcurrentPutsOfOneBlobStoreItOnce) {
  const TestBlob blob = MakeRandomTestBlob(kPart + 1000, MerkleParams{}, 7);
  std::vector<absl::StatusOr<PutResult>> results(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] { results[i] = Put(blob.data); });
  }
  for (std::thread& thread : threads) thread.join();
  int stored = 0;
  for (const absl::StatusOr<PutResult>& result : results) {
    ASSERT_TRUE(result.ok()) << result.status();
    if (!result->already_present) ++stored;
  }
  EXPECT_GE(stored, 1);
  EXPECT_TRUE(*ReadVerified(blob.digest) == blob.data);
}

TEST(S3StoreOpenTest, BadConfigurationNamesTheSetting) {
  ASSERT_TRUE(HaveTestRadosgw());
  S3StoreOptions options = RadosgwOptions("x/");
  options.client.bucket = "no-such-bucket";
  absl::StatusOr<std::unique_ptr<S3Store>> store = S3Store::Open(options);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(store.status().message().find("no-such-bucket"), std::string::npos);
  options = RadosgwOptions("x/");
  options.client.credentials.secret_access_key = "wrong";
  store = S3Store::Open(options);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(store.status().message().find("AWS_ACCESS_KEY_ID"),
            std::string::npos);
  options = RadosgwOptions("x/");
  options.client.endpoint = "http://127.0.0.1:1";
  options.client.max_attempts = 2;
  store = S3Store::Open(options);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("--s3_endpoint"), std::string::npos);
}

}  // namespace
}  // namespace verity::server
