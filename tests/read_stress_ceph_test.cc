// The read path over S3 under load, against the real radosgw that
// tests/testing/with_ceph.sh starts: the reproduction (four 24 MiB
// blobs, --memory_cache_bytes=8388608 --read_ahead_bytes=4194304, no
// --cache_dir, concurrent readers of random ranges), in process
// (tests/testing/read_stress.h). tests/read_stress_test.cc is the same over
// an in-memory S3.

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/store/s3/testing/radosgw.h"
#include "tests/testing/batch_load.h"
#include "tests/testing/read_stress.h"

namespace verity::testing {
namespace {

TEST(ReadStressCephTest, RandomRangesUnderCachePressureAreExact) {
  ASSERT_TRUE(server::HaveTestRadosgw())
      << "run through tests/testing/with_ceph.sh, which sets S3_*";
  ReadStressOptions stress;
  stress.seed = ReadStressSeed();
  // Twice the readers, of shorter ranges: radosgw answers in tens of
  // milliseconds, so an eviction falls between "is it local?" and the read
  // far less often than over FakeS3. On the read path before the two-call
  // contract, eight readers failed none of 6 runs, sixteen 2 of 6.
  stress.readers = 16;
  stress.reads = 800;
  stress.max_read_bytes = uint64_t{1} << 20;
  server::ServerOptions options;
  options.store_kind = server::StoreLocation::Kind::kS3;
  options.s3.client = server::TestRadosgwOptions();
  options.s3.prefix = absl::StrCat("read-stress/", getpid(), "/");
  RunReadStress(UnderCachePressure(options, /*slabs=*/2), stress);
}

// Budgets per server: four clients' 1,000-digest BatchRead and FindMissing
// calls in a loop leave a fifth's Stat and 4 KiB reads answered, never
// refused (tests/testing/batch_load.h).
TEST(ReadStressCephTest, BatchCallsLeaveOtherCallsAnswered) {
  ASSERT_TRUE(server::HaveTestRadosgw())
      << "run through tests/testing/with_ceph.sh, which sets S3_*";
  server::ServerOptions options;
  options.store_kind = server::StoreLocation::Kind::kS3;
  options.s3.client = server::TestRadosgwOptions();
  options.s3.prefix = absl::StrCat("batch-load/", getpid(), "/");
  RunBatchLoad(options, BatchLoadOptions());
}

}  // namespace
}  // namespace verity::testing
