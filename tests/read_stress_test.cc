// The read path over S3 under cache pressure, in memory: verityd's S3 store
// on a FakeS3 that answers blob reads late, on its own threads, as radosgw
// does through curl, with the memory cache at two slabs and eight readers
// (tests/testing/read_stress.h). tests/read_stress_ceph_test.cc is the same
// against a real radosgw.

#include "tests/testing/read_stress.h"

#include <memory>

#include "gtest/gtest.h"
#include "server/store/s3/testing/fake_s3.h"

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

}  // namespace
}  // namespace verity::testing
