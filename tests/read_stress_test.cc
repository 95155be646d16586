// The read path over S3 under cache pressure, in memory: verityd's S3 store
// on a FakeS3 that answers blob reads late, on its own threads, as radosgw
// does through curl, with the memory cache at two slabs and eight readers
// (tests/testing/read_stress.h). tests/read_stress_ceph_test.cc is the same
// against a real radosgw.

#include "tests/testing/read_stress.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/include/verity/client.h"
#include "gtest/gtest.h"
#include "server/store/s3/testing/fake_s3.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

server::ServerOptions OverFakeS3(uint32_t seed) {
  server::FakeS3Options fake;
  fake.answer_gets_later = true;
  fake.max_get_delay = absl::Milliseconds(3);
  fake.seed = seed;
  server::ServerOptions options;
  options.store_kind = server::StoreLocation::Kind::kS3;
  options.s3.client.endpoint = "http://127.0.0.1:1";  // never dialled
  options.s3.client.bucket = "stress";
  options.s3.prefix = "stress/";
  // The client alone owns its bucket: destroying it answers the reads still
  // waiting while the cache they complete into exists, as curl's client
  // does.
  options.s3.make_client = [fake](const server::S3ClientOptions& client)
      -> absl::StatusOr<std::unique_ptr<server::S3Client>> {
    return server::S3Client::WithTransport(
        client, std::make_shared<server::FakeS3>(fake));
  };
  return options;
}

TEST(ReadStressTest, RandomRangesUnderCachePressureAreExact) {
  ReadStressOptions stress;
  stress.seed = ReadStressSeed();
  RunReadStress(UnderCachePressure(OverFakeS3(stress.seed), /*slabs=*/2),
                stress);
}

// BatchRead over a remote store: its blobs open and end on the store's
// threads, often two at once. Each call ends once, with every blob (a call
// whose last two blobs ended together on two threads was once ended by
// both, the second time on a deleted reactor).
TEST(ReadStressTest, BatchReadsWhoseBlobsEndTogetherEndOnce) {
  server::ServerOptions options = OverFakeS3(ReadStressSeed());
  std::unique_ptr<TestServer> server = TestServer::Start(options);
  std::vector<std::string> blobs;
  std::vector<sdk::Digest> digests;
  for (uint32_t i = 0; i < 2; ++i) {
    blobs.push_back(RandomBytes(100 + 100 * i, 40 + i));
    ASSERT_TRUE(PutBlob(server->stub(), blobs.back()).ok());
    digests.push_back(*sdk::Digest::Parse(DigestOf(blobs.back())));
  }
  std::vector<std::thread> readers;
  for (int reader = 0; reader < 8; ++reader) {
    readers.emplace_back([&] {
      sdk::ClientOptions client_options;
      client_options.target = server->verityd().address();
      absl::StatusOr<std::unique_ptr<sdk::Client>> client =
          sdk::Client::Create(client_options);
      ASSERT_TRUE(client.ok()) << client.status();
      for (int call = 0; call < 400; ++call) {
        const auto read = (*client)->BatchRead(digests, {});
        ASSERT_TRUE(read.ok()) << read.status();
        ASSERT_EQ(read->size(), blobs.size());
        for (size_t i = 0; i < blobs.size(); ++i) {
          ASSERT_TRUE((*read)[i].ok()) << (*read)[i].status();
          ASSERT_EQ(*(*read)[i], blobs[i]);
        }
      }
    });
  }
  for (std::thread& reader : readers) reader.join();
}

}  // namespace
}  // namespace verity::testing
