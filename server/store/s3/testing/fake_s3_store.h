// The options of an S3 store whose client talks to a test's S3Transport (a
// FakeS3, or a transport of the test's own) instead of a network.

#ifndef VERITYD_SERVER_STORE_S3_TESTING_FAKE_S3_STORE_H_
#define VERITYD_SERVER_STORE_S3_TESTING_FAKE_S3_STORE_H_

#include <memory>

#include "server/store/s3/s3_client.h"
#include "server/store/s3/s3_store.h"

namespace verity::server {

// Bucket "bucket", prefix "p/", S3's smallest part (5 MiB), the log dropped,
// every client made over `transport`. Tests change what they need.
S3StoreOptions FakeS3StoreOptions(std::shared_ptr<S3Transport> transport);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_S3_TESTING_FAKE_S3_STORE_H_
