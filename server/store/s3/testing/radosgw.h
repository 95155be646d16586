// Test support: the S3 client options of the radosgw that
// tests/testing/with_ceph.sh started, from the environment it exports
// (S3_ENDPOINT, S3_BUCKET, AWS_REGION and the credentials).

#ifndef VERITYD_SERVER_STORE_S3_TESTING_RADOSGW_H_
#define VERITYD_SERVER_STORE_S3_TESTING_RADOSGW_H_

#include "server/store/s3/s3_client.h"

namespace verity::server {

// True if the environment names a radosgw; tests assert it, so that a test
// run outside with_ceph.sh fails with a message rather than a timeout.
bool HaveTestRadosgw();

S3ClientOptions TestRadosgwOptions();

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_TESTING_RADOSGW_H_
