// verityd over a real radosgw, in process (run through
// tests/testing/with_ceph.sh): round trips of every tree parameter and of
// sizes from empty to several multipart parts, digests equal to `fsverity
// digest`, ranges, objects damaged in the bucket, and a damaged disk-cache
// copy, which is read again from the bucket rather than failed.

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/testing/fsverity_cli.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/read_plan.h"
#include "server/store/s3/s3_client.h"
#include "server/store/s3/s3_layout.h"
#include "server/store/s3/testing/radosgw.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

constexpr uint64_t kPart = uint64_t{5} << 20;  // S3's smallest part
constexpr uint64_t kBlock = 4096;              // the default tree parameters

// A server on its own prefix of the test bucket, each test's own.
server::ServerOptions S3Options(const std::string& cache_dir = "") {
  static std::atomic<int> next{0};
  server::ServerOptions options;
  options.store_kind = server::StoreLocation::Kind::kS3;
  options.s3.client = server::TestRadosgwOptions();
  options.s3.prefix = absl::StrCat(
      "server-test/",
      ::testing::UnitTest::GetInstance()->current_test_info()->name(), "-",
      getpid(), "-", next++, "/");
  options.s3.part_bytes = kPart;
  options.s3.log = [](absl::string_view) {};
  options.remote_cache.disk.dir = cache_dir;
  return options;
}

// The S3 key of one of a blob's objects under the server's prefix.
std::string KeyOf(const TestServer& server, const std::string& digest,
                  server::BlobObject what) {
  absl::StatusOr<ParsedDigest> parsed = ParseDigest(digest);
  return server::S3Layout(server.options().s3.prefix).BlobKey(*parsed, what);
}

// `method` on object `key` of the test bucket, as anyone with its
// credentials could.
server::S3Response CallBucket(const char* method, const std::string& key,
                              std::string body = "") {
  auto client = server::S3Client::Create(server::TestRadosgwOptions());
  EXPECT_TRUE(client.ok()) << client.status();
  server::S3Request request;
  request.op = method;
  request.method = method;
  request.key = key;
  request.body = std::move(body);
  return (*client)->Call(std::move(request));
}

// Writes `body` over the object `key`.
void Overwrite(const std::string& key, std::string body) {
  const server::S3Response response = CallBucket("PUT", key, std::move(body));
  ASSERT_TRUE(response.status.ok()) << response.status;
}

std::string Get(const std::string& key) {
  server::S3Response response = CallBucket("GET", key);
  EXPECT_TRUE(response.status.ok()) << response.status;
  return response.body;
}

// Whether the bucket has object `key`.
bool Has(const std::string& key) {
  const absl::Status status = CallBucket("HEAD", key).status;
  EXPECT_TRUE(status.ok() || absl::IsNotFound(status)) << status;
  return status.ok();
}

class S3ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server::HaveTestRadosgw())
        << "run through tests/testing/with_ceph.sh, which sets S3_*";
  }
};

TEST_F(S3ServerTest, RoundTripsEveryTreeParameterAndDigestsMatchFsverity) {
  auto server = TestServer::Start(S3Options());
  const std::vector<MerkleParams> all = {
      MerkleParams(),
      TestParams(HashAlgorithm::kSha256, 4096, "salt"),
      TestParams(HashAlgorithm::kSha512, 4096,
                 "pepper-32-bytes-long-exactly!!!!"),
      TestParams(HashAlgorithm::kSha256, 1024, ""),
      TestParams(HashAlgorithm::kSha512, 16384, "s"),
      TestParams(HashAlgorithm::kSha256, 65536, "")};
  for (const MerkleParams& params : all) {
    for (uint64_t size : {uint64_t{0}, uint64_t{1}, uint64_t{4095},
                          uint64_t{65537}, (uint64_t{1} << 20) + 3}) {
      const std::string data = MakeData(size, size + params.block_size);
      absl::StatusOr<v1::PutResponse> put =
          PutBlob(server->stub(), data, params);
      ASSERT_TRUE(put.ok()) << put.status();
      absl::StatusOr<std::string> file = WriteTestFile("blob", data);
      ASSERT_TRUE(file.ok()) << file.status();
      absl::StatusOr<FsverityOutput> fsverity =
          RunFsverityDigest(*file, params);
      ASSERT_TRUE(fsverity.ok()) << fsverity.status();
      EXPECT_EQ(fsverity->line.substr(0, fsverity->line.find(' ')),
                put->info().digest())
          << size << " bytes, block " << params.block_size;
      ReadResult read = ReadBlob(server->stub(), put->info().digest());
      ASSERT_TRUE(read.status.ok()) << read.status << " size " << size;
      EXPECT_TRUE(read.data == data) << size;
    }
  }
}

TEST_F(S3ServerTest, BlobsOfSeveralPartsAndRanges) {
  auto server = TestServer::Start(S3Options());
  for (bool digest_known : {true, false}) {
    // More than three parts, the last one short.
    const std::string data = MakeData(3 * kPart + 12345, digest_known);
    const std::string digest = DigestOf(data);
    absl::StatusOr<v1::PutResponse> put = PutBlob(
        server->stub(), data, {}, "", digest_known ? digest : "", 1 << 20);
    ASSERT_TRUE(put.ok()) << put.status();
    EXPECT_EQ(put->info().digest(), digest);
    const std::vector<std::pair<uint64_t, uint64_t>> ranges = {
        {0, 1},          {4095, 2},        {kPart - 3, 10},
        {1 << 20, 1},    {12345, 3 << 20}, {data.size() - 1, 1},
        {0, data.size()}};
    for (const auto& [offset, length] : ranges) {
      ReadResult read = ReadBlob(server->stub(), digest, offset, length);
      ASSERT_TRUE(read.status.ok()) << read.status << " at " << offset;
      EXPECT_TRUE(read.data == data.substr(offset, length))
          << offset << "+" << length;
      // ReadSmall opens and reads over S3 as Read does: the range's whole
      // blocks (unverified here; the SDK's tests verify them).
      if (length > kMaxSmallReadBytes - kBlock) continue;
      v1::ReadRequest request;
      request.set_digest(digest);
      request.set_offset(offset);
      request.set_length(length);
      v1::ReadResponse small;
      grpc::ClientContext context;
      const grpc::Status status =
          server->stub().ReadSmall(&context, request, &small);
      ASSERT_TRUE(status.ok()) << status.error_message() << " at " << offset;
      const uint64_t first = offset / kBlock * kBlock;
      EXPECT_EQ(small.data_offset(), first);
      EXPECT_TRUE(small.data() == data.substr(first, small.data().size()));
      EXPECT_GE(first + small.data().size(), offset + length);
    }
  }
}

TEST_F(S3ServerTest, DamagedObjectsAreDataLossAndNothingBadIsSent) {
  auto writer = TestServer::Start(S3Options());
  const std::string data = MakeData(300000, 1);
  const std::string digest = DigestOf(data);
  ASSERT_TRUE(PutBlob(writer->stub(), data).ok());
  const std::string data_key =
      KeyOf(*writer, digest, server::BlobObject::kData);
  const std::string tree_key =
      KeyOf(*writer, digest, server::BlobObject::kTree);
  const std::string tree = Get(tree_key);
  std::string flipped = data;
  flipped[200000] ^= 1;
  const std::string other = MakeData(300000, 2);
  struct Damage {
    const char* what;
    std::string key;
    std::string body;
  };
  for (const Damage& damage : std::vector<Damage>{
           {"a flipped data byte", data_key, flipped},
           {"a truncated data object", data_key, data.substr(0, 250000)},
           {"another blob's data", data_key, other},
           {"a flipped tree byte", tree_key,
            std::string(tree).replace(100, 1, 1, tree[100] ^ 1)}}) {
    Overwrite(damage.key, damage.body);
    // A replica that never read the blob: nothing cached.
    server::ServerOptions options = writer->options();
    auto reader = TestServer::Start(options);
    ReadResult read = ReadBlob(reader->stub(), digest);
    EXPECT_EQ(read.status.code(), StatusCode::kDataLoss)
        << damage.what << ": " << read.status;
    EXPECT_NE(read.status.message().find(digest), std::string::npos)
        << read.status;
    // What the client verified before the damage is a true prefix.
    EXPECT_TRUE(data.compare(0, read.data.size(), read.data) == 0)
        << damage.what;
    EXPECT_LT(read.data.size(), data.size()) << damage.what;
    Overwrite(damage.key, damage.key == data_key ? data : tree);
    read = ReadBlob(TestServer::Start(options)->stub(), digest);
    EXPECT_TRUE(read.status.ok()) << damage.what << ": " << read.status;
  }
}

// A replica reading a blob it holds open while another replica deletes it:
// the objects missing under it are a delete, not damage. The read ends
// NOT_FOUND, and the blob is not quarantined.
TEST_F(S3ServerTest, ABlobDeletedByAnotherReplicaIsNotFound) {
  server::ServerOptions options = S3Options();
  options.service.on_corruption = server::OnCorruption::kQuarantine;
  auto reader = TestServer::Start(options);
  auto deleter = TestServer::Start(options);
  const std::string data = MakeData(10 << 20, 5);
  const std::string digest = DigestOf(data);
  ASSERT_TRUE(PutBlob(reader->stub(), data).ok());
  // The reader opens the blob and holds its first slab.
  ReadResult read = ReadBlob(reader->stub(), digest, 0, 4096);
  ASSERT_TRUE(read.status.ok()) << read.status;
  v1::DeleteRequest request;
  request.set_digest(digest);
  v1::DeleteResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(deleter->stub().Delete(&context, request, &response).ok());
  read = ReadBlob(reader->stub(), digest, 9 << 20, 4096);
  EXPECT_EQ(read.status.code(), StatusCode::kNotFound) << read.status;
  EXPECT_NE(read.status.message().find("deleted"), std::string::npos)
      << read.status;
  EXPECT_TRUE(read.data.empty());
  absl::StatusOr<ParsedDigest> parsed = ParseDigest(digest);
  EXPECT_FALSE(Has(server::S3Layout(options.s3.prefix).QuarantineKey(*parsed)));
}

std::string Flipped(std::string bytes, size_t at) {
  bytes[at] ^= 1;
  return bytes;
}

// With FEC: what the bucket damaged is repaired on read by every replica
// from the blob's fec object, through the slab cache; the objects stay as
// they are and the blob is marked damaged until a Put replaces them. More
// bad blocks than roots, or damaged parity, are DATA_LOSS, never a wrong
// byte.
TEST_F(S3ServerTest, FecRepairsWhatTheBucketDamaged) {
  server::ServerOptions options = S3Options();
  options.s3.fec_roots = 2;
  auto writer = TestServer::Start(options);
  // 74 data blocks and one tree block: one RS group.
  const std::string data = MakeData(300000, 5);
  const std::string digest = DigestOf(data);
  // Without its size: the blob's parts are objects of their own (a sized
  // Put of a small blob makes one record), which the test damages in turn.
  ASSERT_TRUE(PutBlob(writer->stub(), data, {}, "", "", 100000, false).ok());
  const std::string data_key =
      KeyOf(*writer, digest, server::BlobObject::kData);
  const std::string tree_key =
      KeyOf(*writer, digest, server::BlobObject::kTree);
  const std::string fec_key = KeyOf(*writer, digest, server::BlobObject::kFec);
  const std::string mark_key =
      server::S3Layout(options.s3.prefix).DamagedKey(*ParseDigest(digest));
  const std::string tree = Get(tree_key);
  const std::string fec = Get(fec_key);
  ASSERT_EQ(fec.size(), 2 * kBlock);
  // Byte 200000 is byte 3392 of block 48; both parity rows of that byte.
  const std::string bad_parity = Flipped(Flipped(fec, 3392), kBlock + 3392);
  struct Damage {
    const char* what;
    std::string data, tree, fec;
    bool repairable;
  };
  for (const Damage& damage : std::vector<Damage>{
           {"a flipped data byte", Flipped(data, 200000), tree, fec, true},
           {"two bad data blocks", Flipped(Flipped(data, 5000), 250000), tree,
            fec, true},
           {"a flipped tree byte", data, Flipped(tree, 100), fec, true},
           {"three bad data blocks",
            Flipped(Flipped(Flipped(data, 5000), 100000), 250000), tree, fec,
            false},
           {"a bad data block and its parity", Flipped(data, 200000), tree,
            bad_parity, false}}) {
    SCOPED_TRACE(damage.what);
    Overwrite(data_key, damage.data);
    Overwrite(tree_key, damage.tree);
    Overwrite(fec_key, damage.fec);
    // Replicas that never read the blob: nothing cached.
    auto reader = TestServer::Start(options);
    const auto& metrics = reader->verityd().dispatch_metrics();
    ReadResult read = ReadBlob(reader->stub(), digest);
    if (!damage.repairable) {
      EXPECT_EQ(read.status.code(), StatusCode::kDataLoss) << read.status;
      EXPECT_TRUE(data.compare(0, read.data.size(), read.data) == 0);
      EXPECT_GE(metrics.fec_repair_failures(), 1u);
      Overwrite(data_key, data);
      Overwrite(tree_key, tree);
      Overwrite(fec_key, fec);
      continue;
    }
    ASSERT_TRUE(read.status.ok()) << read.status;
    EXPECT_TRUE(read.data == data);
    const uint64_t repaired = metrics.fec_repaired_blocks();
    EXPECT_GE(repaired, 1u);
    EXPECT_EQ(metrics.fec_repair_failures(), 0u);
    // Served from then on without another repair; the objects as they were.
    read = ReadBlob(reader->stub(), digest);
    EXPECT_TRUE(read.status.ok() && read.data == data) << read.status;
    EXPECT_EQ(metrics.fec_repaired_blocks(), repaired);
    EXPECT_TRUE(Get(data_key) == damage.data);
    EXPECT_TRUE(Get(tree_key) == damage.tree);
    EXPECT_TRUE(Has(mark_key));
    // Another replica repairs for itself.
    auto second = TestServer::Start(options);
    read = ReadBlob(second->stub(), digest);
    EXPECT_TRUE(read.status.ok() && read.data == data) << read.status;
    EXPECT_GE(second->verityd().dispatch_metrics().fec_repaired_blocks(), 1u);
    // A Put of the content replaces the objects and lifts the mark.
    ASSERT_TRUE(PutBlob(writer->stub(), data, {}, "", "", 100000, false).ok());
    EXPECT_TRUE(Get(data_key) == data);
    EXPECT_TRUE(Get(tree_key) == tree);
    EXPECT_FALSE(Has(mark_key));
  }
}

// The slab files of a disk cache.
std::vector<std::string> SlabFiles(const std::string& cache_dir) {
  std::vector<std::string> files;
  DIR* dir = opendir((cache_dir + "/slabs").c_str());
  if (dir == nullptr) return files;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') {
      files.push_back(cache_dir + "/slabs/" + entry->d_name);
    }
  }
  closedir(dir);
  return files;
}

TEST_F(S3ServerTest, ADamagedCacheCopyIsReadAgainFromTheBucket) {
  const std::string cache_dir = TestTempDir() + "/cache";
  server::ServerOptions options = S3Options(cache_dir);
  options.remote_cache.slabs.memory_bytes = 0;      // every hit from the disk
  options.remote_cache.slabs.slab_bytes = 1 << 20;  // 3 data slabs, 1 tree slab
  auto server = TestServer::Start(options);
  const std::string data = MakeData(3 << 20, 9);
  const std::string digest = DigestOf(data);
  ASSERT_TRUE(PutBlob(server->stub(), data).ok());
  ASSERT_TRUE(ReadBlob(server->stub(), digest).status.ok());
  // Data and tree slabs, written by the cache's own thread.
  for (int i = 0; i < 500 && SlabFiles(cache_dir).size() < 4; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const std::vector<std::string> files = SlabFiles(cache_dir);
  ASSERT_EQ(files.size(), 4u);
  for (const std::string& file : files) {
    const int fd = open(file.c_str(), O_RDWR);
    ASSERT_GE(fd, 0) << file;
    char byte = 0;
    ASSERT_EQ(pread(fd, &byte, 1, 1000), 1);
    byte ^= 1;
    ASSERT_EQ(pwrite(fd, &byte, 1, 1000), 1);
    close(fd);
  }
  ReadResult read = ReadBlob(server->stub(), digest);
  ASSERT_TRUE(read.status.ok()) << read.status;
  EXPECT_TRUE(read.data == data);
}

}  // namespace
}  // namespace verity::testing
